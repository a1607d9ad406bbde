import { DataSource } from 'typeorm';
import { ParkedDelivery, ParkedLane, ParkedRow, ParkedStore } from '../../inbox/parked-store';
import { CreateMysqlParkedDeliveries1765670400000 } from '../../migrations/create-mysql-parked-deliveries.migration';
import { MessagingTables } from '../../tables/messaging-tables';
import { mysqlTables } from '../../tables/mysql-tables';
import { Delivery } from '../../transports/delivery-contract';
import { drainParked } from '../parked-drain';

/**
 * `for update nowait` meeting a locked row: MySQL 8 answers ER_LOCK_NOWAIT; MariaDB, where NOWAIT is a lock
 * wait of zero, ER_LOCK_WAIT_TIMEOUT.
 */
const LOCK_NOT_AVAILABLE = new Set([3572, 1205]);

/**
 * Parked deliveries on MySQL and MariaDB (see `ParkedStore`). The drain reads in READ COMMITTED: under
 * REPEATABLE READ its locking read would also lock the gap after the lane's last row, and a delivery parked
 * meanwhile would wait for the drain's commit.
 */
export class MysqlParkedStore extends ParkedStore {
  readonly tables: MessagingTables;
  readonly migration = {
    name: CreateMysqlParkedDeliveries1765670400000.name,
    list: 'MysqlMessagingMigrations',
  };

  constructor(private readonly dataSource: DataSource) {
    super();
    this.tables = mysqlTables(dataSource);
  }

  async tableExists(): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `select 1 from information_schema.tables where table_schema = database() and table_name = ?`,
      [this.tables.parked],
    );
    return rows.length > 0;
  }

  async park(group: string, tenant: string, deliveries: readonly Delivery[]): Promise<void> {
    const params: unknown[] = [];
    for (const { wire, origin } of deliveries) {
      params.push(
        group,
        tenant,
        wire.destination,
        wire.key,
        JSON.stringify(wire.headers),
        JSON.stringify(origin),
        wire.body,
      );
    }
    await this.dataSource.query(
      `insert into ${this.tables.parked} (group_name, tenant, destination, \`key\`, headers, origin, body)
       values ${deliveries.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      params,
    );
  }

  async lanes(): Promise<ParkedLane[]> {
    const rows = await this.dataSource.query<
      Array<{ group_name: string; tenant: string; count: string | number }>
    >(`select group_name, tenant, count(*) as count from ${this.tables.parked} group by group_name, tenant`);
    return rows.map((row) => ({ group: row.group_name, tenant: row.tenant, count: Number(row.count) }));
  }

  async count(group: string, tenant: string): Promise<number> {
    const [{ count }] = await this.dataSource.query<Array<{ count: string | number }>>(
      `select count(*) as count from ${this.tables.parked} where group_name = ? and tenant = ?`,
      [group, tenant],
    );
    return Number(count);
  }

  drain(
    group: string,
    tenant: string,
    limit: number,
    work: (parked: readonly ParkedDelivery[]) => Promise<readonly string[]>,
  ): Promise<{ taken: number; deleted: number } | undefined> {
    const { parked } = this.tables;
    return drainParked(
      this.dataSource,
      {
        isolation: 'READ COMMITTED',
        lock: async (runner) =>
          (await runner.query(
            `select id, destination, \`key\`, headers, origin, body from ${parked}
              where group_name = ? and tenant = ? order by id limit ? for update nowait`,
            [group, tenant, limit],
          )) as ParkedRow[],
        isLockNotAvailable: (error) =>
          LOCK_NOT_AVAILABLE.has(Number((error as { driverError?: { errno?: number } }).driverError?.errno)),
        remove: async (runner, ids) => {
          await runner.query(`delete from ${parked} where id in (${ids.map(() => '?').join(', ')})`, [
            ...ids,
          ]);
        },
      },
      work,
    );
  }
}
