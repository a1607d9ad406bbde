import { z } from 'zod';
import { InvalidEventDefinitionError } from '../errors/invalid-event-definition.error';
import { showValue } from '../errors/shown-value';
import { isEventVersion, MAX_EVENT_VERSION } from './event-version';

/** A destination name that is valid as a Kafka topic and as a RabbitMQ exchange. */
const DESTINATION_PATTERN = /^[A-Za-z0-9._-]{1,200}$/;
const TYPE_PATTERN = /^[A-Za-z][A-Za-z0-9._-]{0,199}$/;
/** True for a valid event type name: a letter, then up to 199 letters, digits, `.`, `_` or `-`. */
export function isEventTypeName(type: string): boolean {
  return TYPE_PATTERN.test(type);
}

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
  /**
   * The version of the payload's shape: published in `msg.event-version` (above 1); a consumer takes older
   * versions through `upcasters` and holds newer ones. Undefined means 1 (`defineEvent()` always sets it).
   */
  readonly version?: number;
  /**
   * Upcasters by the version they take a payload from, each to the next version: a chain ending at
   * `version - 1` (see `defineEvent()`). Undefined or empty: only `version` itself is taken.
   */
  readonly upcasters?: Readonly<Record<number, Upcaster>>;
}

/**
 * Takes a payload of one version (parsed JSON, not validated: written by an older producer) to the shape of
 * the next version. Synchronous and pure: it may run on every delivery. Type its parameter as the old shape
 * you expect, e.g. `(v1: { title: string }) => ({ ...v1, tags: [] })`; what the last upcaster returns is
 * validated by the current schema.
 */
export type Upcaster = (payload: never) => unknown;

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
  /**
   * The version of this payload shape, a whole number from 1 to 1000000: raise it for a change that
   * consumers of the previous shape would misread, and give an upcaster from the previous version. Default 1.
   */
  version?: number;
  /**
   * Upcasters keyed by the version they take a payload from, each to the next: for `version: 3`,
   * `{ 1: (v1) => v2, 2: (v2) => v3 }`. They must form an unbroken chain ending at `version - 1`; the
   * lowest key is the oldest version a consumer takes (an older message is held, then dead-lettered).
   * Default: none (only `version` is taken).
   */
  upcasters?: Record<number, Upcaster>;
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
 *
 * A later shape of the same event gets a version and an upcaster from the previous one:
 *
 * ```ts
 * export const PostCreated = defineEvent({
 *   type: 'PostCreated', destination: 'post-create', key: (event) => event.authorId,
 *   version: 2,
 *   schema: z.object({ postId: z.number().int(), authorId: z.number().int(), title: z.string(), tags: z.array(z.string()) }),
 *   upcasters: { 1: (v1: { postId: number; authorId: number; title: string }) => ({ ...v1, tags: [] }) },
 * });
 * ```
 *
 * @throws InvalidEventDefinitionError naming the field: a bad type, destination or key, a version that is not
 *   a whole number from 1 to 1000000, or upcasters that are not functions forming a chain up to `version - 1`.
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
  const version = input.version ?? 1;
  if (!isEventVersion(version)) {
    throw new InvalidEventDefinitionError(
      input.type,
      'version',
      `a whole number from 1 to ${MAX_EVENT_VERSION} (got ${showValue(version)})`,
    );
  }
  const upcasters = checkedUpcasters(input.type, version, input.upcasters);
  const keyOf = input.key;
  return Object.freeze({
    type: input.type,
    destination: input.destination,
    schema: input.schema as z.ZodType<z.output<TSchema>>,
    key: (payload: z.output<TSchema>) => String(keyOf(payload)),
    version,
    upcasters,
  });
}

/**
 * The upcasters, checked and frozen: a plain object whose keys are versions below `version`, each a function,
 * forming an unbroken chain that ends at `version - 1`.
 */
function checkedUpcasters(
  type: string,
  version: number,
  upcasters: unknown,
): Readonly<Record<number, Upcaster>> {
  if (upcasters === undefined) return Object.freeze({});
  const refuse = (expected: string) => new InvalidEventDefinitionError(type, 'upcasters', expected);
  if (typeof upcasters !== 'object' || upcasters === null || Array.isArray(upcasters)) {
    throw refuse(
      'an object of functions keyed by the version each takes a payload from, e.g. { 1: (v1) => v2 }',
    );
  }
  const entries = Object.entries(upcasters as Record<string, unknown>);
  const froms: number[] = [];
  for (const [key, upcaster] of entries) {
    const from = Number(key);
    if (!isEventVersion(from) || String(from) !== key || from >= version) {
      throw refuse(
        `keyed by the versions below ${version} (the event's version) each takes a payload from; ` +
          `got the key ${JSON.stringify(key)}`,
      );
    }
    if (typeof upcaster !== 'function') throw refuse(`functions; the one from version ${from} is not`);
    froms.push(from);
  }
  if (froms.length === 0) return Object.freeze({});
  const oldest = Math.min(...froms);
  for (let from = oldest; from < version; from++) {
    if (!froms.includes(from)) {
      throw refuse(
        `an unbroken chain from version ${oldest} to ${version}: there is no upcaster from version ${from} ` +
          `to ${from + 1}`,
      );
    }
  }
  return Object.freeze(Object.fromEntries(entries) as Record<number, Upcaster>);
}
