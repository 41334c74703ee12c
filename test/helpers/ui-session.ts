/**
 * Browser steps shared by the console's tests: sign in through the form,
 * and the project API (with a token) for setting up files quickly.
 */
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { UiDaemon, UiProject } from './ui-daemon.js';

export interface SignedIn {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Texts of every dialog (alert/confirm/prompt) the pages opened: XSS would land here. */
  readonly dialogs: string[];
}

export async function signIn(browser: Browser, d: UiDaemon, project: UiProject, viewport = { width: 1280, height: 800 }): Promise<SignedIn> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(`${d.url}/ui/sign-in`);
  await page.fill('#token', project.token);
  await Promise.all([page.waitForURL(`${d.url}/ui`), page.click('button[type=submit]')]);
  assert.equal(await page.locator('header .project').textContent(), project.name);
  return { context, page, dialogs };
}

/** A call to the project API with the project's token; throws unless 200. */
export async function api(d: UiDaemon, project: UiProject, method: 'GET' | 'POST', path: string, body?: unknown): Promise<any> {
  const res = await fetch(d.url + path, {
    method,
    headers: { authorization: `Service-Project-Token ${project.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const json = await res.json();
  assert.equal(res.status, 200, `${method} ${path}: ${JSON.stringify(json)}`);
  return json;
}

export const saveFile = (d: UiDaemon, project: UiProject, name: string, body: string) => api(d, project, 'POST', '/project/file/save', { file: { name, body } });

/** The page's document inside `page.evaluate`/`waitForFunction` callbacks (the tests compile without the DOM lib). */
export interface PageDocument {
  querySelector(selector: string): { textContent: string | null } | null;
  readonly documentElement: { readonly scrollWidth: number; readonly clientWidth: number };
}
