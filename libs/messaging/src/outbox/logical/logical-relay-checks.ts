import { LogicalDecodingUnavailableError } from '../../errors/logical-decoding-unavailable.error';
import { ReplicationSlotInvalidatedError } from '../../errors/replication-slot-invalidated.error';
import { ReplicationSlotMissingError } from '../../errors/replication-slot-missing.error';
import { LogicalNames } from './logical-names';
import { formatLsn } from './lsn';
import {
  MIN_LOGICAL_VERSION_NUM,
  readReplicationServer,
  readReplicationSlot,
  ReplicationSlotState,
  SqlRunner,
} from './replication-slot';

/**
 * What `relay.mode: 'logical'` needs of the server before the application writes a message: `wal_level =
 * logical`; for an instance that runs the relay, replication connections and a role that may open one; and
 * the slot, in this database, with pgoutput, its publication, not invalidated. Throws an error naming each
 * missing piece and how to add it.
 */
export async function checkLogicalRelayServer(
  sql: SqlRunner,
  names: LogicalNames,
  runsRelay: boolean,
): Promise<ReplicationSlotState> {
  const server = await readReplicationServer(sql);
  const problems: string[] = [];
  if (server.versionNum < MIN_LOGICAL_VERSION_NUM) {
    problems.push(
      `the server is PostgreSQL ${Math.floor(server.versionNum / 10000)}; the logical relay needs 14 or later ` +
        "(pgoutput's messages option): upgrade PostgreSQL, or leave relay.mode unset (or 'poll')",
    );
  }
  if (server.walLevel !== 'logical') {
    problems.push(
      `wal_level is '${server.walLevel}', logical decoding needs 'logical': ALTER SYSTEM SET wal_level = ` +
        'logical and restart PostgreSQL (on a managed service, its logical replication parameter)',
    );
  }
  if (runsRelay && server.maxWalSenders < 1) {
    problems.push('max_wal_senders is 0, so the server takes no replication connection: set it to 10');
  }
  if (runsRelay && !server.canReplicate) {
    problems.push(
      `the role '${server.role}' may not open the replication connection the relay reads the slot with: ` +
        `ALTER ROLE "${server.role}" REPLICATION (or relay.enabled: false on instances that only write)`,
    );
  }
  if (problems.length > 0) throw new LogicalDecodingUnavailableError(problems);
  const slot = await readReplicationSlot(sql, names);
  if (!slot) throw new ReplicationSlotMissingError(names.slot);
  if (!slot.inThisDatabase) {
    throw new ReplicationSlotMissingError(
      names.slot,
      `decodes the database '${slot.database}', not this service's '${server.database}'`,
    );
  }
  if (slot.plugin !== 'pgoutput') {
    throw new ReplicationSlotMissingError(
      names.slot,
      `uses the plugin '${slot.plugin}', not pgoutput (drop it first: nest-messaging relay slot drop)`,
    );
  }
  if (!slot.publicationExists) {
    throw new ReplicationSlotMissingError(names.slot, `has no publication '${names.publication}'`);
  }
  if (slot.walStatus === 'lost') {
    throw new ReplicationSlotInvalidatedError(
      names.slot,
      slot.confirmedLsn === undefined ? undefined : formatLsn(slot.confirmedLsn),
    );
  }
  return slot;
}
