/**
 * A real browser for the console's tests: Debian's Chromium at
 * /usr/bin/chromium (override with SERVICE_TEST_CHROMIUM) driven by
 * playwright-core — never a browser downloaded by Playwright. When it is
 * missing, tests fail under CI=true (.ci/run installs it with apt) and skip
 * locally with a message saying how to get it.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';

export const chromiumPath = (): string => process.env.SERVICE_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Where the tests write their screenshots (not in the repository). */
export const SCREENSHOT_DIR = process.env.SERVICE_UI_SCREENSHOTS ?? path.join(os.tmpdir(), 'service-ui-screenshots');

export const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/** The browser, or undefined after marking the test skipped (locally); throws under CI=true. */
export async function requireBrowser(t: Pick<TestContext, 'skip'>): Promise<Browser | undefined> {
  const executablePath = chromiumPath();
  if (!existsSync(executablePath)) {
    const why = `Chromium not found at ${executablePath}`;
    if (process.env.CI === 'true') throw new Error(`${why} and CI=true: browser tests must not be skipped in CI (install it with apt-get install -y chromium)`);
    t.skip(`${why}; install it with apt-get install -y chromium to run the web console's browser tests`);
    return undefined;
  }
  return chromium.launch({ executablePath, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

/** Screenshots of the page as it is now at both sizes: `<name>-desktop.png`, `<name>-phone.png`. */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const original = page.viewportSize();
  for (const [size, viewport] of Object.entries(SIZES)) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}-${size}.png`), fullPage: true });
  }
  if (original) await page.setViewportSize(original);
}
