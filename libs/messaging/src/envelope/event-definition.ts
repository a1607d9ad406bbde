import { z } from 'zod';
import { InvalidEventDefinitionError } from '../errors/invalid-event-definition.error';

/** A destination name that is valid as a Kafka topic and as a RabbitMQ exchange. */
const DESTINATION_PATTERN = /^[A-Za-z0-9._-]{1,200}$/;
const TYPE_PATTERN = /^[A-Za-z][A-Za-z0-9._-]{0,199}$/;
/**
 * Names the brokers keep for themselves (`.`/`..`, `__*` and `_schemas` on Kafka, `amq.*` on RabbitMQ), and
 * names of the library's own dead-letter and retry destinations (`*.dlq`, `*.retry.<n>ms`).
 */
const RESERVED_DESTINATION = /^(\.{1,2}|__.*|_schemas|amq\..*)$|(^|\.)(dlq|retry\.\d+ms)$/;

/**
 * An event the application publishes or consumes: its type name, where it goes, how it is keyed and the
 * schema of its payload. One definition serves both ends, so producer and consumer agree by construction.
 */
export interface EventDefinition<TType extends string = string, TPayload = unknown> {
  /** The event type, e.g. `PostCreated`; travels in the `msg.type` header. */
  readonly type: TType;
  /** The Kafka topic or RabbitMQ exchange it is published to. */
  readonly destination: string;
  /** Validates payloads on publish (a bug: the transaction rolls back) and on consume (VALIDATION). */
  readonly schema: z.ZodType<TPayload>;
  /** The ordering key of a payload: one key's events are published and consumed in order. */
  key(payload: TPayload): string;
}

/** The payload type of an event definition: `EventPayload<typeof PostCreated>`. */
export type EventPayload<TEvent> = TEvent extends EventDefinition<string, infer P> ? P : never;

/** What `defineEvent()` takes. */
export interface EventDefinitionInput<TType extends string, TSchema extends z.ZodType> {
  /** The event type, e.g. `PostCreated`: 1-100 letters, digits, `.`, `_` or `-`. */
  type: TType;
  /** The Kafka topic or RabbitMQ exchange, e.g. `post-create`: same characters; not a broker-reserved name. */
  destination: string;
  /** A zod schema of the payload (JSON-serialisable); validated on publish and on consume. */
  schema: TSchema;
  /** The ordering key of a payload (e.g. `(event) => event.authorId`): one key's events stay in order. */
  key: (payload: z.output<TSchema>) => string | number;
}

/**
 * Declares an event.
 *
 * ```ts
 * export const PostCreated = defineEvent({
 *   type: 'PostCreated',
 *   destination: 'post-create',
 *   schema: z.object({ postId: z.number().int(), authorId: z.number().int(), title: z.string() }),
 *   key: (event) => event.authorId,
 * });
 * ```
 */
export function defineEvent<const TType extends string, TSchema extends z.ZodType>(
  input: EventDefinitionInput<TType, TSchema>,
): EventDefinition<TType, z.output<TSchema>> {
  if (!TYPE_PATTERN.test(input.type)) {
    throw new InvalidEventDefinitionError(
      input.type,
      'type',
      'a letter, then letters, digits, ".", "_" or "-"',
    );
  }
  if (!DESTINATION_PATTERN.test(input.destination) || RESERVED_DESTINATION.test(input.destination)) {
    throw new InvalidEventDefinitionError(
      input.type,
      'destination',
      'letters, digits, ".", "_" or "-" (1-200)',
    );
  }
  if (typeof input.key !== 'function') {
    throw new InvalidEventDefinitionError(
      input.type,
      'key',
      'a function from the payload to its ordering key',
    );
  }
  const keyOf = input.key;
  return Object.freeze({
    type: input.type,
    destination: input.destination,
    schema: input.schema as z.ZodType<z.output<TSchema>>,
    key: (payload: z.output<TSchema>) => String(keyOf(payload)),
  });
}
