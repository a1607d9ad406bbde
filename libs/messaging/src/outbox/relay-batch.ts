import { encodeEnvelope } from '../envelope/envelope-codec';
import { MessageTracing } from '../observability/message-tracing';
import { MessageTransport } from '../transports/message-transport.interface';
import { outcomesWithin, PublishOutcome } from '../transports/publish-outcome';
import { ClaimedOutboxRow } from './outbox-row';
import type { Clock } from '../common/clock';

/** A row the broker did not confirm, with what it said. */
export interface UnconfirmedRow {
  readonly row: ClaimedOutboxRow;
  readonly outcome: Exclude<PublishOutcome, { status: 'CONFIRMED' }>;
}

/** A row behind an unconfirmed row of its key in the same batch, with what the broker said about it. */
export interface HeldBackRow {
  readonly row: ClaimedOutboxRow;
  readonly outcome: PublishOutcome;
}

/** A published batch, sorted by what the broker said. */
export interface PublishedBatch {
  readonly rows: readonly ClaimedOutboxRow[];
  /** Confirmed, and no earlier row of their key in the batch unconfirmed: to be marked sent. */
  readonly confirmed: readonly ClaimedOutboxRow[];
  /** The first unconfirmed row of each key: an attempt is counted, and it is tried again after a backoff. */
  readonly unconfirmed: readonly UnconfirmedRow[];
  /**
   * The rows of a key after its first unconfirmed one, whatever the broker said about them: released
   * without counting an attempt, to go again after it. A confirmed one among them is on the broker ahead of
   * the earlier row (RabbitMQ answers each message of a batch on its own); its copy that counts is the one
   * that follows the earlier row's.
   */
  readonly heldBack: readonly HeldBackRow[];
}

/**
 * Pairs each row with its outcome (the transport answers one outcome per message, in order). Once a key has
 * an unconfirmed row, its later rows in the batch are held back with it: marking one sent would let it
 * count as delivered before the row ahead of it.
 */
export function sortOutcomes(
  rows: readonly ClaimedOutboxRow[],
  outcomes: readonly PublishOutcome[],
): PublishedBatch {
  const confirmed: ClaimedOutboxRow[] = [];
  const unconfirmed: UnconfirmedRow[] = [];
  const heldBack: HeldBackRow[] = [];
  const failedKeys = new Set<string>();
  rows.forEach((row, i) => {
    const outcome = outcomes[i];
    if (failedKeys.has(keyOf(row))) heldBack.push({ row, outcome });
    else if (outcome.status === 'CONFIRMED') confirmed.push(row);
    else {
      unconfirmed.push({ row, outcome });
      failedKeys.add(keyOf(row));
    }
  });
  return { rows, confirmed, unconfirmed, heldBack };
}

/** True when the broker confirmed no message of a batch that had some (it looks down). */
export function confirmedNothing(batch: PublishedBatch): boolean {
  return (
    batch.rows.length > 0 &&
    batch.confirmed.length === 0 &&
    batch.heldBack.every(({ outcome }) => outcome.status !== 'CONFIRMED')
  );
}

/** Batches published one after the other, as one. */
export function joinBatches(batches: readonly PublishedBatch[]): PublishedBatch {
  if (batches.length === 1) return batches[0];
  return {
    rows: batches.flatMap((b) => b.rows),
    confirmed: batches.flatMap((b) => b.confirmed),
    unconfirmed: batches.flatMap((b) => b.unconfirmed),
    heldBack: batches.flatMap((b) => b.heldBack),
  };
}

/** The ordering key of a row: one destination's key. */
export function keyOf(row: Pick<ClaimedOutboxRow, 'destination' | 'key'>): string {
  return `${row.destination}\u0000${row.key}`;
}

/**
 * Splits a claim made while an earlier batch was on the wire: rows whose key had a message that was not
 * confirmed must wait behind it (they are released), the others go on.
 */
export function holdBackBehindFailures(
  claimed: readonly ClaimedOutboxRow[],
  failedKeys: ReadonlySet<string>,
): { readonly publish: ClaimedOutboxRow[]; readonly release: ClaimedOutboxRow[] } {
  const publish: ClaimedOutboxRow[] = [];
  const release: ClaimedOutboxRow[] = [];
  for (const row of claimed) (failedKeys.has(keyOf(row)) ? release : publish).push(row);
  return { publish, release };
}

/**
 * Publishes rows as one batch, in id order, each in a publish span continuing its stored trace. Stops waiting
 * after `timeoutMs`, and takes a publish that throws for an answer that never came: then every outcome is
 * AMBIGUOUS (the broker may still write them).
 */
export async function publishRows(
  transport: MessageTransport,
  tracing: MessageTracing,
  rows: readonly ClaimedOutboxRow[],
  timeoutMs: number,
  clock?: Pick<Clock, 'setTimeout'>,
): Promise<PublishOutcome[]> {
  const traced = tracing.publish(
    transport.kind,
    rows.map((row) => encodeEnvelope(row, row.payloadJson)),
  );
  const outcomes = await outcomesWithin(
    (signal) => transport.publish(traced.messages, { signal }),
    rows.length,
    timeoutMs,
    'broker confirmation',
    clock,
  );
  traced.end(outcomes);
  return outcomes;
}
