import { MessageEnvelope } from '../envelope/message-envelope';
import { oldestVersionOf, upcastPayload, versionOf } from '../envelope/upcast';
import { FailureCategory } from '../errors/failure-category';
import { errorLine } from './delivery-description';
import { HandlerDefinition } from './handler-registry';
import { HoldReason } from './held-messages';
import { Failure } from './settle-decision';

/**
 * A payload read at the handler's event version, or why not: a failure to hold (`hold`: a version this
 * consumer cannot take yet, an upcaster that failed) or to settle as unprocessable at once.
 */
export type PayloadReading =
  { readonly payload: unknown } | { readonly failure: Failure; readonly hold?: HoldReason };

/**
 * Reads the envelope's payload for `handler`: takes it from its version (`msg.event-version`) to the
 * definition's through the upcasters, then validates it with the schema. A newer version than the definition's,
 * or one older than its upcasters reach, is VALIDATION (`VERSION_TOO_NEW`, `VERSION_TOO_OLD`) and held; an
 * upcaster that throws, or whose result the schema refuses, is UPCAST (`UPCAST_FAILED`, `UPCAST_INVALID`) and
 * held; a payload of the definition's own version the schema refuses is VALIDATION/SCHEMA_MISMATCH, held only
 * with `holdSchemaMismatches`.
 */
export function readPayload(
  handler: Pick<HandlerDefinition, 'event'>,
  envelope: MessageEnvelope,
  holdSchemaMismatches: boolean,
): PayloadReading {
  const { event } = handler;
  const from = envelope.eventVersion ?? 1;
  const failure = (category: FailureCategory, code: string, detail: string): Failure => ({
    category,
    code,
    messageId: envelope.messageId,
    detail,
  });
  const upcast = upcastPayload(event, envelope.payload, from);
  if (!upcast.ok) {
    if (upcast.problem === 'UPCAST_FAILED') {
      const detail = `the upcaster of ${event.type} from version ${upcast.from} threw: ${errorLine(upcast.error)}`;
      return { failure: failure(FailureCategory.UPCAST, 'UPCAST_FAILED', detail), hold: 'upcast' };
    }
    const takes = `this consumer takes ${event.type} versions ${oldestVersionOf(event)} to ${versionOf(event)}`;
    const detail = `version ${from}; ${takes}`;
    return { failure: failure(FailureCategory.VALIDATION, upcast.problem, detail), hold: 'version' };
  }
  const parsed = event.schema.safeParse(upcast.payload);
  if (parsed.success) return { payload: parsed.data };
  const paths = parsed.error.issues.map((i) => i.path.join('.') || '(payload)').join(', ');
  if (from < versionOf(event)) {
    const detail = `upcast from version ${from}, the schema refuses ${paths}`;
    return { failure: failure(FailureCategory.UPCAST, 'UPCAST_INVALID', detail), hold: 'upcast' };
  }
  const mismatch = failure(FailureCategory.VALIDATION, 'SCHEMA_MISMATCH', paths);
  return holdSchemaMismatches ? { failure: mismatch, hold: 'schema' } : { failure: mismatch };
}
