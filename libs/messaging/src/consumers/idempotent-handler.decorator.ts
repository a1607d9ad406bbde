import { SetMetadata } from '@nestjs/common';
import { EventDefinition, EventPayload } from '../envelope/event-definition';
import { IDEMPOTENT_HANDLER_METADATA } from '../messaging.constants';
import { MessageContext } from './message-context';

/** Options of `@IdempotentHandler()`. */
export interface IdempotentHandlerOptions {
  /** The consumer group: a Kafka group id; on RabbitMQ the queue `<destination>.<group>`. Required. */
  group: string;
}

/** What the decorator records on the method. */
export interface IdempotentHandlerMetadata extends IdempotentHandlerOptions {
  readonly event: EventDefinition<string, unknown>;
}

/** The shape a handler method must have for an event: it gets the validated payload and the context. */
export type HandlerMethod<TPayload> = (payload: TPayload, context: MessageContext) => unknown;

/**
 * Handles `event` in consumer group `group`, once per message id, however often the broker delivers it:
 * the handler's database writes and the inbox record commit in one transaction, and the delivery is
 * settled (offset committed, message acked) only after that commit.
 *
 * ```ts
 * @IdempotentHandler(PostCreated, { group: 'subscribe-service' })
 * async onPostCreated(event: EventPayload<typeof PostCreated>, context: MessageContext) { ... }
 * ```
 * A method whose first parameter does not accept the event's payload type is a compile error.
 */
export function IdempotentHandler<TEvent extends EventDefinition<string, unknown>>(
  event: TEvent,
  options: IdempotentHandlerOptions,
): <TMethod extends HandlerMethod<EventPayload<TEvent>>>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<TMethod>,
) => void {
  const metadata: IdempotentHandlerMetadata = { ...options, event };
  return (target, propertyKey, descriptor) => {
    SetMetadata(IDEMPOTENT_HANDLER_METADATA, metadata)(target, propertyKey, descriptor);
  };
}
