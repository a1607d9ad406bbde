import { MessageEnvelope } from '../envelope/message-envelope';
import { Delivery } from '../transports/delivery-contract';
import { MessageContext } from './message-context';
import { Failure } from './settle-decision';

/** The context a handler gets with its payload. */
export function messageContext(
  group: string,
  delivery: Delivery,
  envelope: MessageEnvelope,
  attempt: number,
  manager: MessageContext['manager'],
  tenant?: string,
): MessageContext {
  return {
    tenant,
    messageId: envelope.messageId,
    type: envelope.type,
    destination: envelope.destination,
    key: envelope.key,
    group,
    attempt,
    eventVersion: envelope.eventVersion ?? 1,
    occurredAt: envelope.occurredAt,
    headers: envelope.headers,
    partition: delivery.origin.partition,
    offset: delivery.origin.offset,
    deliveryTag: delivery.origin.deliveryTag,
    redelivered: delivery.origin.redelivered,
    manager,
  };
}

/** A log line about a failed delivery: message id, destination, group, attempt, where from; no payload. */
export function failureLogLine(
  group: string,
  delivery: Delivery,
  failure: Failure,
  attempt: number,
  outcome: string,
): string {
  const id = failure.messageId ?? '(no valid message id)';
  const { source, partition, offset } = delivery.origin;
  const where = partition === undefined ? source : `${source}[${partition}]@${offset}`;
  const detail = failure.detail ? ` (${failure.detail})` : '';
  return (
    `Message ${id} on ${delivery.wire.destination} (group ${group}, attempt ${attempt}, from ${where}) failed: ` +
    `${failure.category}/${failure.code}${detail}; ${outcome}.`
  );
}

/** Names a message for a log line. */
export function describeMessage(envelope: MessageEnvelope, group: string, attempt: number): string {
  return `Message ${envelope.messageId} (${envelope.type} on ${envelope.destination}, group ${group}, attempt ${attempt})`;
}

/** The error's name and the start of its message, for the log (never for a message header). */
export function errorLine(error: unknown): string {
  if (!(error instanceof Error)) return 'non-Error thrown';
  return `${error.name}: ${error.message}`.slice(0, 200);
}
