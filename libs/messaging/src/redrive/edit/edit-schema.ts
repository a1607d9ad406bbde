import { EventDefinition } from '../../envelope/event-definition';
import { MessageHeaders } from '../../envelope/message-headers';

/** What checking an edited payload against the event definitions found. */
export type EditSchemaCheck =
  | { readonly kind: 'valid' }
  /** The definition refuses it: each issue's path and code (never the values). */
  | { readonly kind: 'invalid'; readonly issues: readonly string[] }
  /** No definition of the message's type and version is known. */
  | { readonly kind: 'unknown'; readonly detail: string };

/**
 * Checks `payload` (parsed JSON) against the definition of the dead letter's `msg.type` at its
 * `msg.event-version` (absent: 1) among `events`. A dead letter of an older version than the definition
 * is not checked against the newer schema: the consumer upcasts it first, so its shape is the old one.
 */
export function checkEditSchema(
  events: readonly EventDefinition[],
  headers: Readonly<Record<string, string>>,
  payload: unknown,
): EditSchemaCheck {
  const type = headers[MessageHeaders.TYPE];
  const version = Number(headers[MessageHeaders.EVENT_VERSION] ?? '1');
  if (!type) return { kind: 'unknown', detail: 'the message has no msg.type' };
  const sameType = events.filter((event) => event.type === type);
  const definition = sameType.find((event) => (event.version ?? 1) === version);
  if (!definition) {
    const known = sameType.map((event) => event.version ?? 1);
    return {
      kind: 'unknown',
      detail:
        known.length === 0
          ? `no event definition of ${type} is known`
          : `${type} is known at version ${known.join(', ')}, the message is version ${version}`,
    };
  }
  const result = definition.schema.safeParse(payload);
  if (result.success) return { kind: 'valid' };
  return {
    kind: 'invalid',
    issues: result.error.issues.map((issue) => `/${issue.path.map(String).join('/')}: ${issue.code}`),
  };
}
