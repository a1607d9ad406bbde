import type { DataSource } from 'typeorm';
import { UnsupportedDatabaseError } from '../errors/unsupported-database.error';
import { messagingDialect } from './messaging-dialect';
import { MysqlInboxStore } from './mysql/mysql-inbox-store';
import { MysqlOutboxStore } from './mysql/mysql-outbox-store';
import { PostgresInboxStore } from './postgres/postgres-inbox-store';
import { PostgresOutboxStore } from './postgres/postgres-outbox-store';

/** Only what the dialect and the stores' constructors read of a DataSource. */
function dataSource(type: string): DataSource {
  return { options: { type }, driver: { database: 'app' } } as unknown as DataSource;
}

describe('messaging-dialect', () => {
  describe(messagingDialect.name, () => {
    it('keeps PostgreSQL on its stores', () => {
      const ds = dataSource('postgres');
      expect(messagingDialect(ds).outboxStore(ds)).toBeInstanceOf(PostgresOutboxStore);
      expect(messagingDialect(ds).inboxStore(ds)).toBeInstanceOf(PostgresInboxStore);
    });

    it.each(['mysql', 'mariadb'])('gives %p the MySQL stores', (type) => {
      const ds = dataSource(type);
      const outbox = messagingDialect(ds).outboxStore(ds);
      expect(outbox).toBeInstanceOf(MysqlOutboxStore);
      expect(outbox.notifyChannel).toBeUndefined();
      expect(outbox.migration.list).toBe('MysqlMessagingMigrations');
      expect(messagingDialect(ds).inboxStore(ds)).toBeInstanceOf(MysqlInboxStore);
    });

    it.each(['sqlite', 'better-sqlite3', 'mssql', 'cockroachdb', 'aurora-mysql', 'toString'])(
      'refuses %p with an error naming it and what is supported',
      (type) => {
        const error = (() => {
          try {
            return messagingDialect(dataSource(type));
          } catch (e) {
            return e;
          }
        })();
        expect(error).toBeInstanceOf(UnsupportedDatabaseError);
        expect(error).toMatchObject({ databaseType: type });
        expect((error as Error).message).toContain(`'${type}'`);
        expect((error as Error).message).toMatch(/PostgreSQL .*MySQL .*MariaDB/);
      },
    );
  });
});
