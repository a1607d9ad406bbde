/** `1234` → `1.23 s`. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

/** Milliseconds below a second, seconds above; `–` for no value. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  return ms < 1_000 ? `${Math.round(ms)} ms` : seconds(ms);
}
