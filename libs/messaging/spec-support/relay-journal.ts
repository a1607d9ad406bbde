/**
 * What the broker does with one message: confirms it (written), refuses it (not written), or gives an
 * answer that says nothing (AMBIGUOUS) after writing it or not.
 */
export type ScriptedOutcome = 'confirm' | 'reject' | 'ambiguous-written' | 'ambiguous-lost';

/** One publish call as the broker saw it: its messages in order, and what it did with each. */
export interface PublishCall {
  readonly index: number;
  readonly relay: string;
  readonly at: number;
  readonly messageIds: readonly string[];
  readonly outcomes: readonly ScriptedOutcome[];
}

/**
 * The history of a relay spec, in the order things happened: the broker's publish calls and the store's
 * claims, marks (rows actually marked sent) and settlements (an owner reporting what became of rows it held:
 * marked, failed or released, whether or not it still held them), and relays that died.
 */
export type JournalEntry =
  | ({ readonly kind: 'published' } & PublishCall)
  | { readonly kind: 'claimed'; readonly owner: string; readonly at: number; readonly ids: readonly string[] }
  | { readonly kind: 'marked'; readonly owner: string; readonly at: number; readonly ids: readonly string[] }
  | { readonly kind: 'settled'; readonly owner: string; readonly at: number; readonly ids: readonly string[] }
  | { readonly kind: 'died'; readonly owner: string; readonly at: number };

/** A row as the invariants need it. */
export interface JournalRow {
  readonly id: string;
  readonly messageId: string;
  readonly destination: string;
  readonly key: string;
  readonly sentAt?: number;
}

/** Where a copy of a message went out: the publish call and the message's place in it. */
interface Position {
  readonly call: number;
  readonly index: number;
}

const before = (a: Position, b: Position) => a.call < b.call || (a.call === b.call && a.index < b.index);

/**
 * Checks the relay's promises against a journal; returns one line per violation (none: all kept).
 * - single publisher: no row is put on the wire while a live relay (the same or another) still has an earlier
 *   copy of it unsettled, that is while that relay's lease on it holds and it waits for the answer;
 * - only confirmed rows are marked sent: a relay marks a row only after a copy it published since it claimed
 *   the row was confirmed;
 * - order per key: first copies leave in id order, and the copies that counted (the confirmed copy behind
 *   each mark) are in id order too: a later row is never marked on a copy sent before an earlier row's.
 */
export function relayViolations(journal: readonly JournalEntry[], rows: readonly JournalRow[]): string[] {
  const violations: string[] = [];
  const byMessage = new Map(rows.map((row) => [row.messageId, row]));
  const outstanding = new Map<string, Map<string, number>>(); // row → relay → since
  const dead = new Set<string>();
  const firstCopy = new Map<string, Position>();
  const lastClaim = new Map<string, number>(); // `${relay} ${row}` → journal index
  const confirmedCopy = new Map<string, { at: number; position: Position }>(); // `${relay} ${row}` → latest
  const counted = new Map<string, Position>();

  journal.forEach((entry, at) => {
    if (entry.kind === 'died') {
      dead.add(entry.owner);
      return;
    }
    if (entry.kind === 'published') {
      entry.messageIds.forEach((messageId, index) => {
        const row = byMessage.get(messageId);
        if (!row) throw new Error(`A message of no row: ${messageId}`);
        const holders = outstanding.get(row.id) ?? new Map<string, number>();
        for (const [relay, since] of holders) {
          if (!dead.has(relay))
            violations.push(
              `row ${row.id} published by ${entry.relay} at ${entry.at} while ${relay} had a copy unsettled since ${since}`,
            );
        }
        holders.set(entry.relay, entry.at);
        outstanding.set(row.id, holders);
        if (!firstCopy.has(row.id)) firstCopy.set(row.id, { call: entry.index, index });
        if (entry.outcomes[index] === 'confirm') {
          confirmedCopy.set(`${entry.relay} ${row.id}`, { at, position: { call: entry.index, index } });
        }
      });
      return;
    }
    if (entry.kind === 'claimed') {
      entry.ids.forEach((id) => lastClaim.set(`${entry.owner} ${id}`, at));
      return;
    }
    if (entry.kind === 'settled') {
      entry.ids.forEach((id) => outstanding.get(id)?.delete(entry.owner));
      return;
    }
    for (const id of entry.ids) {
      const copy = confirmedCopy.get(`${entry.owner} ${id}`);
      const claimedAt = lastClaim.get(`${entry.owner} ${id}`) ?? -1;
      if (!copy || copy.at < claimedAt) {
        violations.push(`row ${id} marked sent by ${entry.owner} without a confirmed copy since its claim`);
      } else {
        counted.set(id, copy.position);
      }
    }
  });

  const keys = new Map<string, JournalRow[]>();
  for (const row of rows) {
    const key = `${row.destination}/${row.key}`;
    keys.set(key, [...(keys.get(key) ?? []), row]);
  }
  for (const [key, ofKey] of keys) {
    const inOrder = [...ofKey].sort((a, b) => Number(a.id) - Number(b.id));
    for (const [name, positions] of [
      ['first copies', firstCopy],
      ['counted copies', counted],
    ] as const) {
      const placed = inOrder.filter((row) => positions.has(row.id));
      for (let i = 1; i < placed.length; i++) {
        const [earlier, later] = [placed[i - 1], placed[i]];
        if (!before(positions.get(earlier.id)!, positions.get(later.id)!))
          violations.push(`key ${key}: ${name} out of order, row ${later.id} before row ${earlier.id}`);
      }
    }
  }
  return violations;
}
