/**
 * The TypeORM internal the NOTIFY listener and the logical relay read (typeorm-postgres-pool.patch.ts): an
 * initialised PostgreSQL DataSource keeps its pg pool in `driver.master`, with the settings pg took in
 * `pool.options`. Checked against the installed TypeORM and pg on the real server: if an upgrade moves the
 * pool, a test here fails before the relay loses its wake-ups.
 */
import { Client, Notification, Pool } from 'pg';
import { DataSource } from 'typeorm';
import { typeormPostgresConnectionConfig, typeormPostgresPool } from 'nest-reliable-messaging/testing';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { openDataSource } from '../support/messaging-module';

describe('TypeORM internals the PostgreSQL pool patch relies on', () => {
  let schema: TestSchema;
  let dataSource: DataSource;

  beforeAll(async () => {
    schema = await createTestSchema('pool_contract');
    dataSource = await openDataSource(schema, false);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await schema?.drop();
  });

  it("keeps the DataSource's pg Pool in driver.master once initialised", () => {
    expect(typeormPostgresPool(dataSource)).toBeInstanceOf(Pool);
  });

  it('lends a connection of that pool that counts in it and hears NOTIFY (what the listener holds)', async () => {
    const pool = typeormPostgresPool(dataSource);
    const client = await pool.connect();
    try {
      expect(pool.totalCount - pool.idleCount).toBeGreaterThanOrEqual(1);
      const channel = uniqueName('contract_wake');
      const heard = new Promise<Notification>((resolve) => client.once('notification', resolve));
      await client.query(`listen "${channel}"`);
      await dataSource.query(`notify "${channel}"`);
      expect((await heard).channel).toBe(channel);
    } finally {
      client.release();
    }
  });

  it("has the settings pg took in pool.options, enough for a connection of the relay's own", async () => {
    const config = typeormPostgresConnectionConfig(dataSource);
    expect(config).toEqual(expect.objectContaining({ connectionString: schema.databaseUrl }));
    const client = new Client({ ...config, application_name: 'pool contract' });
    await client.connect();
    try {
      const [row] = (await client.query<{ one: number }>('select 1 as one')).rows;
      expect(row.one).toBe(1);
    } finally {
      await client.end();
    }
  });

  it('answers with a copy: changing the settings read changes nothing in the pool', () => {
    const config = typeormPostgresConnectionConfig(dataSource);
    config.application_name = 'changed';
    expect(typeormPostgresConnectionConfig(dataSource).application_name).not.toBe('changed');
  });
});
