import { DataSource } from 'typeorm';
import { messagingDialect, ParkedStore } from 'nest-reliable-messaging/testing';
import { createTestDatabase, EACH_DATABASE, TestDatabase } from '../../harness/test-database';
import { testConnectionOptions } from '../support/messaging-app';

/**
 * `messaging_parked` on each database (`ParkedStore`): a tenant's deliveries parked while its database does not
 * answer, kept with their bytes, headers and origin, drained in id order, by one instance at a time.
 */
describe.each(EACH_DATABASE)('Parked deliveries (%s)', (_, dialect) => {
  let schema: TestDatabase;
  let dataSource: DataSource;
  let store: ParkedStore;

  beforeAll(async () => {
    schema = await createTestDatabase(dialect, 'parked');
    dataSource = new DataSource({
      ...testConnectionOptions(schema, 4, true),
      migrationsRun: true,
      logging: false,
    });
    await dataSource.initialize();
    store = messagingDialect(dataSource).parkedStore(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await schema?.drop();
  });

  const delivery = (n: number, key: string | null = `k${n % 2}`) => ({
    wire: {
      destination: 'orders',
      key,
      headers: { 'msg.id': `id-${n}`, 'msg.tenant': 'acme' },
      body: Buffer.from([0, 255, n, 10]),
    },
    origin: { source: 'orders', partition: 1, offset: String(100 + n) },
  });

  it('exists once the migrations ran, and keeps what it parks, in order, byte for byte', async () => {
    await expect(store.tableExists()).resolves.toBe(true);
    await store.park('billing', 'acme', [delivery(1), delivery(2, null), delivery(3)]);
    await store.park('billing', 'globex', [delivery(9)]);
    expect(await store.count('billing', 'acme')).toBe(3);
    const lanes = await store.lanes();
    expect(lanes.sort((a, b) => a.tenant.localeCompare(b.tenant))).toEqual([
      { group: 'billing', tenant: 'acme', count: 3 },
      { group: 'billing', tenant: 'globex', count: 1 },
    ]);
    const seen: unknown[] = [];
    const result = await store.drain('billing', 'acme', 2, async (parked) => {
      seen.push(...parked.map(({ wire, origin }) => ({ wire, origin })));
      return [parked[0].id]; // the second one is not settled: it stays, and so does the rest
    });
    expect(result).toEqual({ taken: 2, deleted: 1 });
    expect(seen).toEqual([delivery(1), delivery(2, null)]);
    expect(await store.count('billing', 'acme')).toBe(2);
  });

  // claim: C-116
  it('lets one instance drain a lane at a time; the others find it taken, and parking goes on meanwhile', async () => {
    let inner: Awaited<ReturnType<ParkedStore['drain']>> | 'not run' = 'not run';
    await store.drain('billing', 'acme', 10, async (parked) => {
      inner = await store.drain('billing', 'acme', 10, async () => []);
      await store.park('billing', 'acme', [delivery(4)]); // parked behind, while the drain holds the others
      return parked.map((p) => p.id);
    });
    expect(inner).toBeUndefined();
    const left: string[] = [];
    await store.drain('billing', 'acme', 10, async (parked) => {
      left.push(...parked.map((p) => p.wire.headers['msg.id']));
      return parked.map((p) => p.id);
    });
    expect(left).toEqual(['id-4']);
    expect(await store.count('billing', 'acme')).toBe(0);
  });
});
