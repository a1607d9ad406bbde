import { DataSource } from 'typeorm';
import { ParkedDelivery, ParkedLane, ParkedRow, ParkedStore } from '../../inbox/parked-store';
import { CreateParkedDeliveries1765670400000 } from '../../migrations/create-parked-deliveries.migration';
import { MessagingTables } from '../../tables/messaging-tables';
import { postgresTables } from '../../tables/postgres-tables';
import { Delivery } from '../../transports/delivery-contract';
import { drainParked } from '../parked-drain';

/** PostgreSQL's answer when `for update nowait` meets a row another transaction locked. */
const LOCK_NOT_AVAILABLE = '55P03';

/** Parked deliveries on PostgreSQL (see `ParkedStore`). */
export class PostgresParkedStore extends ParkedStore {
  readonly tables: MessagingTables;
  readonly migration = { name: CreateParkedDeliveries1765670400000.name, list: 'MessagingMigrations' };

  constructor(private readonly dataSource: DataSource) {
    super();
    this.tables = postgresTables(dataSource);
  }

  async tableExists(): Promise<boolean> {
    const [{ found }] = await this.dataSource.query<Array<{ found: string | null }>>(
      'select to_regclass($1) as found',
      [this.tables.parked],
    );
    return found !== null;
  }

  async park(group: string, tenant: string, deliveries: readonly Delivery[]): Promise<void> {
    const params: unknown[] = [group, tenant];
    const rows = deliveries.map(({ wire, origin }) => {
      const at = params.push(
        wire.destination,
        wire.key,
        JSON.stringify(wire.headers),
        JSON.stringify(origin),
        wire.body,
      );
      return `($1, $2, $${at - 4}, $${at - 3}, $${at - 2}::jsonb, $${at - 1}::jsonb, $${at})`;
    });
    await this.dataSource.query(
      `insert into ${this.tables.parked} (group_name, tenant, destination, key, headers, origin, body)
       values ${rows.join(', ')}`,
      params,
    );
  }

  async lanes(): Promise<ParkedLane[]> {
    const rows = await this.dataSource.query<Array<{ group_name: string; tenant: string; count: string }>>(
      `select group_name, tenant, count(*) as count from ${this.tables.parked} group by group_name, tenant`,
    );
    return rows.map((row) => ({ group: row.group_name, tenant: row.tenant, count: Number(row.count) }));
  }

  async count(group: string, tenant: string): Promise<number> {
    const [{ count }] = await this.dataSource.query<Array<{ count: string }>>(
      `select count(*) as count from ${this.tables.parked} where group_name = $1 and tenant = $2`,
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
        lock: async (runner) =>
          (await runner.query(
            `select id, destination, key, headers, origin, body from ${parked}
              where group_name = $1 and tenant = $2 order by id limit $3 for update nowait`,
            [group, tenant, limit],
          )) as ParkedRow[],
        isLockNotAvailable: (error) =>
          (error as { driverError?: { code?: string } }).driverError?.code === LOCK_NOT_AVAILABLE,
        remove: async (runner, ids) => {
          await runner.query(`delete from ${parked} where id = any($1::bigint[])`, [ids]);
        },
      },
      work,
    );
  }
}
