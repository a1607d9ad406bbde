/**
 * True when a claim's window was full (`picked` rows of `limit`) and the order check kept less than half of
 * it: rows of keys whose first row cannot go (backing off after a refusal, leased elsewhere) fill it, and
 * rows of other keys and destinations may wait behind them. The claim then takes a second window past the
 * first that skips such keys (400 rows of one refused key would otherwise starve every destination: docs/guide/02-guarantees.md).
 */
export function isStarved(picked: number, kept: number, limit: number): boolean {
  return picked >= limit && kept * 2 < limit;
}
