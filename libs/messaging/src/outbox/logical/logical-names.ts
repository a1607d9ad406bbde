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

/**
 * The names of a tenant's outbox (the `tenants` option with `relay.mode: 'logical'`): the slot
 * `messaging_tenant_<tenant>`, named after the tenant because slot names are the whole server's and tenants'
 * databases may share one. A name that is not already a slot name (upper case, `-`, `.`, too long) is
 * lower-cased, its other characters turned to `_`, and a hash of it appended, so `a-b` and `a_b` differ.
 */
export function tenantLogicalNames(tenant: string): LogicalNames {
  const name = `messaging_tenant_${tenant}`;
  return logicalNames(undefined, /^[a-z0-9_]{1,63}$/.test(name) ? name : slotName(name, tenant));
}

function defaultSlotName(schema: string | undefined): string {
  if (schema === undefined) return 'messaging_outbox';
  const name = `messaging_outbox_${schema}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  return name.length <= MAX_NAME_LENGTH ? name : slotName(name, schema);
}

/** `name` made a slot name (lower case, `[a-z0-9_]`) and shortened to fit a hash of `source` after it. */
function slotName(name: string, source: string): string {
  const safe = name.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 8);
  return `${safe.slice(0, MAX_NAME_LENGTH - hash.length - 1)}_${hash}`;
}
