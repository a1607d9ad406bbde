import { html, Html } from './html';

/**
 * How long ago `thenMs` was at `nowMs`, in words an on-call engineer reads at a glance: `just now` under
 * 5 s, then the largest whole unit (`42 s ago`, `4 min ago`, `3 h ago`, `2 d ago`), and `in 2 min` for a
 * time ahead (an expiry). Self-contained (no imports, no closure): the console's script carries its source,
 * so the browser says exactly what the server does.
 */
export function relativeAge(thenMs: number, nowMs: number): string {
  const units: Array<[number, string]> = [
    [86400000, 'd'],
    [3600000, 'h'],
    [60000, 'min'],
    [1000, 's'],
  ];
  const delta = nowMs - thenMs;
  const size = Math.abs(delta);
  if (size < 5000) return 'just now';
  for (const [ms, unit] of units) {
    if (size >= ms) {
      const count = Math.floor(size / ms);
      return delta >= 0 ? `${count} ${unit} ago` : `in ${count} ${unit}`;
    }
  }
  return 'just now';
}

/**
 * A time as the server renders it: a `<time>` in UTC (`2026-12-03 07:36:43 UTC`), with its age at `nowMs`
 * when given. The console's script rewrites it in the viewer's zone and keeps the age current; without the
 * script it stays correct, in UTC.
 */
export function timeOf(at: Date | string | null | undefined, nowMs?: number): Html | string {
  if (at === null || at === undefined || at === '') return '';
  const date = typeof at === 'string' ? new Date(at) : at;
  if (Number.isNaN(date.getTime())) return typeof at === 'string' ? at : '';
  const iso = date.toISOString();
  const utc = `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
  const age = nowMs === undefined ? '' : ` (${relativeAge(date.getTime(), nowMs)})`;
  return html`<time datetime="${iso}" title="${iso}" data-console-time>${utc}${age}</time>`;
}
