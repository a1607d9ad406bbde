import { encodeEnvelope } from '../envelope/envelope-codec';
import { MessageTracing } from '../observability/message-tracing';
import { MessageTransport } from '../transports/message-transport.interface';
import { outcomesWithin, PublishOutcome } from '../transports/publish-outcome';
import { ClaimedOutboxRow } from './outbox-row';

/** A row the broker did not confirm, with what it said. */
export interface UnconfirmedRow {
  readonly row: ClaimedOutboxRow;
  readonly outcome: Exclude<PublishOutcome, { status: 'CONFIRMED' }>;
}

/** A published batch, sorted by what the broker said. */
export interface PublishedBatch {
  readonly rows: readonly ClaimedOutboxRow[];
  readonly confirmed: readonly ClaimedOutboxRow[];
  readonly unconfirmed: readonly UnconfirmedRow[];
}

/** Pairs each row with its outcome (the transport answers one outcome per message, in order). */
export function sortOutcomes(
  rows: readonly ClaimedOutboxRow[],
  outcomes: readonly PublishOutcome[],
): PublishedBatch {
  const confirmed: ClaimedOutboxRow[] = [];
  const unconfirmed: UnconfirmedRow[] = [];
  rows.forEach((row, i) => {
    const outcome = outcomes[i];
    if (outcome.status === 'CONFIRMED') confirmed.push(row);
    else unconfirmed.push({ row, outcome });
  });
  return { rows, confirmed, unconfirmed };
}

/** Batches published one after the other, as one. */
export function joinBatches(batches: readonly PublishedBatch[]): PublishedBatch {
  if (batches.length === 1) return batches[0];
  return {
    rows: batches.flatMap((b) => b.rows),
    confirmed: batches.flatMap((b) => b.confirmed),
    unconfirmed: batches.flatMap((b) => b.unconfirmed),
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
 * after `timeoutMs` (then every outcome is AMBIGUOUS: the broker may still write them).
 */
export async function publishRows(
  transport: MessageTransport,
  tracing: MessageTracing,
  rows: readonly ClaimedOutboxRow[],
  timeoutMs: number,
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
  );
  traced.end(outcomes);
  return outcomes;
}
