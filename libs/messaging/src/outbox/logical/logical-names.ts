import { createHash } from 'node:crypto';

/** What a logical relay reads and its writers tag: one outbox's names in PostgreSQL's log. */
export interface LogicalNames {
  /** The logical replication slot (pgoutput) the relay reads. */
  readonly slot: string;
  /** The publication pgoutput is started with: an empty one of the slot's name (messages need no table). */
  readonly publication: string;
  /** The prefix of this outbox's messages (`pg_logical_emit_message`); the relay skips every other. */
  readonly prefix: string;
}

/** PostgreSQL's longest name (NAMEDATALEN - 1). */
const MAX_NAME_LENGTH = 63;

/**
 * The names of the outbox in `schema` (the DataSource's; undefined: the search path's), or of the slot the
 * options name: `messaging_outbox` / `messaging_outbox_<schema>`, at most 63 characters (a long schema name is
 * shortened with a hash of it). The prefix carries the slot's name, so two outboxes in one database (two
 * schemas) never read each other's messages.
 */
export function logicalNames(schema: string | undefined, slot?: string): LogicalNames {
  const name = slot ?? defaultSlotName(schema);
  return { slot: name, publication: name, prefix: `nest-reliable-messaging:${name}` };
}

function defaultSlotName(schema: string | undefined): string {
  if (schema === undefined) return 'messaging_outbox';
  const name = `messaging_outbox_${schema}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (name.length <= MAX_NAME_LENGTH) return name;
  const hash = createHash('sha256').update(schema).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_NAME_LENGTH - hash.length - 1)}_${hash}`;
}
