/** Time axes of the console's charts: round tick steps (1, 2, 5 × 10ⁿ ms) and their labels. */

/** Tick positions (ms) from 0 to `spanMs`, about 4 to 10 of them. */
export function axisTicks(spanMs: number): number[] {
  const rough = Math.max(spanMs, 1) / 6;
  const p = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= rough) ?? 10 * p;
  const ticks: number[] = [];
  for (let t = 0; t <= spanMs + 1e-9; t += step) ticks.push(t);
  return ticks;
}

/** `0 s`, `0.25 s`, `12 s`, `2 min`, `1 min 30 s` for a tick or a duration in ms. */
export function secondsLabel(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${Number(s.toPrecision(3))} s`;
  const m = Math.floor(s / 60);
  const rest = Math.round(s - m * 60);
  return rest === 0 ? `${m} min` : `${m} min ${rest} s`;
}
