import type { Clock } from '../../common/clock';
import { encodeEnvelope } from '../../envelope/envelope-codec';
import { MessageTracing } from '../../observability/message-tracing';
import { MessageTransport } from '../../transports/message-transport.interface';
import { outcomesWithin, PublishOutcome } from '../../transports/publish-outcome';
import { ClaimedOutboxRow } from '../outbox-row';

/**
 * Publishes rows as one batch, in order, each in a publish span continuing its stored trace. Stops waiting
 * after `timeoutMs`, and takes a publish that throws for an answer that never came: then every outcome is
 * AMBIGUOUS (the broker may still write them). The encoding happens before the first await, so a relay
 * that calls this for the next batch while one is on the wire encodes it at once.
 */
export async function publishRows(
  transport: Pick<MessageTransport, 'kind' | 'publish'>,
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
