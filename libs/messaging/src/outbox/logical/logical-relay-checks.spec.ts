import { LogicalDecodingUnavailableError } from '../../errors/logical-decoding-unavailable.error';
import { checkLogicalRelayServer } from './logical-relay-checks';
import { logicalNames } from './logical-names';
import { SqlRunner } from './replication-slot';

const names = logicalNames('app');

/** A server that answers the checks' two queries: its settings, then the slot. */
function server(versionNum: number): SqlRunner {
  return <R extends object>(sql: string) => {
    if (sql.includes('wal_level')) {
      return Promise.resolve([
        {
          version_num: String(versionNum),
          wal_level: 'logical',
          max_wal_senders: '10',
          keep: '-1',
          can_replicate: true,
          role: 'app',
          database: 'app',
        },
      ] as unknown as R[]);
    }
    return Promise.resolve([
      {
        plugin: 'pgoutput',
        database: 'app',
        same_database: true,
        active: false,
        active_pid: null,
        wal_status: 'reserved',
        confirmed: '0/16B3748',
        lag_bytes: '0',
        safe_wal_size: null,
        publication: true,
      },
    ] as unknown as R[]);
  };
}

describe(checkLogicalRelayServer.name, () => {
  // claim: C-12
  it('takes PostgreSQL 14 and later', async () => {
    await expect(checkLogicalRelayServer(server(140010), names, true)).resolves.toMatchObject({
      plugin: 'pgoutput',
    });
  });

  // Defect F12: on 13 nothing checked the version, and START_REPLICATION was retried for ever.
  // claim: C-12
  it('refuses PostgreSQL 13 at startup, naming the version it needs', async () => {
    const check = checkLogicalRelayServer(server(130012), names, true);
    await expect(check).rejects.toBeInstanceOf(LogicalDecodingUnavailableError);
    await expect(check).rejects.toThrow(/PostgreSQL 13; the logical relay needs 14 or later/);
  });
});
