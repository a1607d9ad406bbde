import { LogicalNames } from './logical-names';
import { Lsn, parseLsn } from './lsn';
import { decodePgoutput } from './replication-protocol';

/** Runs one statement and returns its rows (a DataSource's `query`, or a pg client's). */
export type SqlRunner = <R extends object>(sql: string, params?: unknown[]) => Promise<R[]>;

/** `pg_replication_slots.wal_status`: `lost` once PostgreSQL removed WAL the slot still needed. */
export type SlotWalStatus = 'reserved' | 'extended' | 'unreserved' | 'lost';

/** A logical relay's slot as PostgreSQL describes it. */
export interface ReplicationSlotState {
  readonly slot: string;
  /** pgoutput for a slot `relay slot create` made. */
  readonly plugin: string;
  /** The database the slot decodes: the relay's own, or the slot is of no use to it. */
  readonly database: string;
  readonly inThisDatabase: boolean;
  /** A relay reads it now (`activePid`: its walsender). */
  readonly active: boolean;
  readonly activePid?: number;
  readonly walStatus?: SlotWalStatus;
  /** Everything before this is confirmed (published); undefined once invalidated, on some versions. */
  readonly confirmedLsn?: Lsn;
  /** WAL written since the confirmed position, bytes: what a restart would read again (and the slot keeps). */
  readonly lagBytes?: number;
  /** Bytes the log may still grow before the slot is invalidated (`max_slot_wal_keep_size`); undefined: no limit. */
  readonly safeWalSize?: number;
  /** The publication of the slot's name exists (pgoutput refuses to start without it). */
  readonly publicationExists: boolean;
}

/** What the server offers logical decoding. */
export interface ReplicationServerState {
  readonly walLevel: string;
  readonly maxWalSenders: number;
  /** `max_slot_wal_keep_size`, as the server shows it (`-1`: no limit). */
  readonly maxSlotWalKeepSize: string;
  /** The role may open replication connections (the REPLICATION attribute, or a superuser). */
  readonly canReplicate: boolean;
  readonly role: string;
  readonly database: string;
  /** `server_version_num`: 150004 for 15.4. */
  readonly versionNum: number;
}

/** The oldest PostgreSQL the logical relay reads: pgoutput's `messages` option came in 14. */
export const MIN_LOGICAL_VERSION_NUM = 140000;
/** From 17 on, a logical slot can be made to follow a physical failover (`failover`, `sync_replication_slots`). */
export const FAILOVER_SLOTS_VERSION_NUM = 170000;

/** The server's settings that logical decoding needs, and the role's attributes. */
export async function readReplicationServer(sql: SqlRunner): Promise<ReplicationServerState> {
  const [row] = await sql<{
    wal_level: string;
    max_wal_senders: string;
    keep: string;
    can_replicate: boolean | null;
    role: string;
    database: string;
    version_num: string;
  }>(
    `select current_setting('server_version_num') as version_num, current_setting('wal_level') as wal_level, current_setting('max_wal_senders') as max_wal_senders,
            current_setting('max_slot_wal_keep_size') as keep, current_user as role,
            current_database() as database,
            (select rolreplication or rolsuper from pg_roles where rolname = current_user) as can_replicate`,
  );
  return {
    walLevel: row.wal_level,
    maxWalSenders: Number(row.max_wal_senders),
    maxSlotWalKeepSize: row.keep,
    canReplicate: row.can_replicate === true,
    role: row.role,
    database: row.database,
    versionNum: Number(row.version_num),
  };
}

/** The slot `names.slot`, or undefined when there is none. */
export async function readReplicationSlot(
  sql: SqlRunner,
  names: LogicalNames,
): Promise<ReplicationSlotState | undefined> {
  const rows = await sql<{
    plugin: string;
    database: string;
    same_database: boolean;
    active: boolean;
    active_pid: number | null;
    wal_status: SlotWalStatus | null;
    confirmed: string | null;
    lag_bytes: string | null;
    safe_wal_size: string | null;
    publication: boolean;
  }>(
    `select s.plugin, s.database, s.database = current_database() as same_database, s.active, s.active_pid,
            s.wal_status, s.confirmed_flush_lsn::text as confirmed,
            pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn)::bigint::text as lag_bytes,
            s.safe_wal_size::text as safe_wal_size,
            exists (select 1 from pg_publication where pubname = $2) as publication
     from pg_replication_slots s where s.slot_name = $1`,
    [names.slot, names.publication],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    slot: names.slot,
    plugin: row.plugin,
    database: row.database,
    inThisDatabase: row.same_database,
    active: row.active,
    activePid: row.active_pid ?? undefined,
    walStatus: row.wal_status ?? undefined,
    confirmedLsn: row.confirmed ? parseLsn(row.confirmed) : undefined,
    lagBytes: row.lag_bytes === null ? undefined : Number(row.lag_bytes),
    safeWalSize: row.safe_wal_size === null ? undefined : Number(row.safe_wal_size),
    publicationExists: row.publication,
  };
}

/**
 * Creates the publication (empty: messages need no table) and the slot (pgoutput), each unless it exists;
 * returns whether the slot was created. The publication comes first: pgoutput looks it up as of the
 * position it decodes, so a publication made after the slot would be missing for the slot's first messages.
 */
export async function createReplicationSlot(sql: SqlRunner, names: LogicalNames): Promise<boolean> {
  const [publication] = await sql<{ found: boolean }>(
    'select exists (select 1 from pg_publication where pubname = $1) as found',
    [names.publication],
  );
  if (!publication.found) await sql(`create publication "${names.publication}"`);
  if (await readReplicationSlot(sql, names)) return false;
  const [{ version }] = await sql<{ version: string }>(
    `select current_setting('server_version_num') as version`,
  );
  // PostgreSQL 17+: a slot made with failover is kept on standbys that sync_replication_slots keeps in step,
  // so a promoted standby has it. Before 17 a standby has no logical slot: see the guide's HA section.
  if (Number(version) >= FAILOVER_SLOTS_VERSION_NUM) {
    await sql(`select pg_create_logical_replication_slot($1, 'pgoutput', false, false, true)`, [names.slot]);
  } else {
    await sql(`select pg_create_logical_replication_slot($1, 'pgoutput')`, [names.slot]);
  }
  return true;
}

/** Drops the slot and its publication (each if it exists). */
export async function dropReplicationSlot(sql: SqlRunner, names: LogicalNames): Promise<void> {
  await sql('select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1', [
    names.slot,
  ]);
  await sql(`drop publication if exists "${names.publication}"`);
}

/**
 * Counts this outbox's messages the (inactive) slot holds and no relay confirmed yet, reading at most
 * `limit` changes without consuming them. PostgreSQL refuses while a relay reads the slot.
 */
export async function countUnreadMessages(
  sql: SqlRunner,
  names: LogicalNames,
  limit: number,
): Promise<{ messages: number; complete: boolean }> {
  const rows = await sql<{ data: Buffer }>(
    `select data from pg_logical_slot_peek_binary_changes($1, null, $2,
       'proto_version', '1', 'publication_names', $3, 'messages', 'true')`,
    [names.slot, limit, names.publication],
  );
  const messages = rows.filter((row) => {
    const message = decodePgoutput(row.data);
    return message.tag === 'message' && message.transactional && message.prefix === names.prefix;
  }).length;
  return { messages, complete: rows.length < limit };
}
