import fc from 'fast-check';
import { Logger } from '@nestjs/common';
import { FakeClock } from '../common/fake-clock';
import { ParkedDelivery, ParkedLane, ParkedStore } from '../inbox/parked-store';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { postgresTables } from '../tables/postgres-tables';
import { Delivery, Settlement } from '../transports/delivery-contract';
import { TenantParking } from './tenant-parking';
import { useQuietWarnings } from '../../spec-support/quiet-warnings';
import { FakeInbox, GROUP, Harness, idOf } from '../../spec-support/pipeline-harness';
import { FakeTenants, tenantOrder } from '../../spec-support/fake-tenants';
import { DataSource } from 'typeorm';

const PARK_AFTER_MS = 1_000;

/** `messaging_parked` in memory: ids in order, a lane locked while one drain holds it. */
class FakeParkedStore extends ParkedStore {
  readonly tables = postgresTables({ options: {} } as DataSource);
  readonly migration = { name: 'CreateParkedDeliveries', list: 'MessagingMigrations' };
  readonly rows: Array<ParkedDelivery & { group: string; tenant: string }> = [];
  private nextId = 1;
  private readonly locked = new Set<string>();
  /** The next writes fail (the service's database away). */
  failWrites = 0;
  /** Drains begun (each a transaction of the service's database, its rows locked). */
  drains = 0;

  async tableExists(): Promise<boolean> {
    return true;
  }

  async park(group: string, tenant: string, deliveries: readonly Delivery[]): Promise<void> {
    if (this.failWrites > 0 && this.failWrites--) throw new Error('connection refused');
    for (const d of deliveries) this.rows.push({ ...d, id: String(this.nextId++), group, tenant });
  }

  async lanes(): Promise<ParkedLane[]> {
    const counts = new Map<string, ParkedLane>();
    for (const { group, tenant } of this.rows) {
      const key = `${group}/${tenant}`;
      counts.set(key, { group, tenant, count: (counts.get(key)?.count ?? 0) + 1 });
    }
    return [...counts.values()];
  }

  async count(group: string, tenant: string): Promise<number> {
    return this.rows.filter((r) => r.group === group && r.tenant === tenant).length;
  }

  async drain(
    group: string,
    tenant: string,
    limit: number,
    work: (parked: readonly ParkedDelivery[]) => Promise<readonly string[]>,
  ): Promise<{ taken: number; deleted: number } | undefined> {
    const key = `${group}/${tenant}`;
    this.drains += 1;
    if (this.locked.has(key)) return undefined;
    this.locked.add(key);
    try {
      const taken = this.rows.filter((r) => r.group === group && r.tenant === tenant).slice(0, limit);
      const done = new Set(taken.length > 0 ? await work(taken) : []);
      for (let i = this.rows.length - 1; i >= 0; i--) if (done.has(this.rows[i].id)) this.rows.splice(i, 1);
      return { taken: taken.length, deleted: done.size };
    } finally {
      this.locked.delete(key);
    }
  }
}

const of = tenantOrder;

function setUp(): {
  harness: Harness;
  store: FakeParkedStore;
  parking: TenantParking;
  inbox: FakeInbox;
  tenants: FakeTenants;
} {
  const clock = new FakeClock();
  const store = new FakeParkedStore();
  const options = {
    tenants: { parkAfterMs: PARK_AFTER_MS },
    consumers: { batchSize: 10 },
  } as unknown as ResolvedMessagingOptions;
  const parking = new TenantParking(store, options, clock, new MessagingMetrics());
  const inbox = new FakeInbox();
  const tenants = new FakeTenants();
  const harness = new Harness({ tenants, clock, inbox, parking, batchSize: 10 });
  return { harness, store, parking, inbox, tenants };
}

/** Also the parking's and the database wait's log lines: hundreds in a property run. */
function useQuietLogs(): void {
  useQuietWarnings();
  beforeEach(() => jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined));
}

describe(TenantParking.name, () => {
  useQuietLogs();

  it("parks a tenant's deliveries once its database has not answered for parkAfterMs, and the later ones behind them", async () => {
    const { harness, store, parking, inbox } = setUp();
    inbox.downTenants.add('acme');
    const first = of('acme', 1, 'k1');
    // Waits for acme's database (250 ms, 500 ms, …), then parks it: settled on the broker, its handler not run.
    await expect(harness.withTimePassing(harness.handle(first))).resolves.toEqual({ kind: 'ACK' });
    expect(harness.clock.now()).toBeGreaterThanOrEqual(PARK_AFTER_MS);
    expect(store.rows.map((r) => idOf(r.wire))).toEqual([idOf(first)]);
    expect(parking.isParked(GROUP, 'acme')).toBe(true);
    // The lane is parked: acme's next ones go behind at once (no wait), globex's run.
    const batch = [of('acme', 2, 'k1'), of('globex', 3, 'k1'), of('acme', 4, 'k2')];
    const before = harness.clock.now();
    const settled = await harness.handleBatch(batch);
    expect(harness.clock.now()).toBe(before);
    expect(settled.map((s) => s.kind)).toEqual(['ACK', 'ACK', 'ACK']);
    expect(harness.calls.map((c) => c.tenant)).toEqual(['globex']);
    expect(store.rows.map((r) => idOf(r.wire))).toEqual([idOf(first), idOf(batch[0]), idOf(batch[2])]);
    expect(
      await harness.metrics.registry.getSingleMetricAsString('messaging_consumer_messages_total'),
    ).toMatch(/outcome="parked"} 3/);
  });

  it('applies the parked deliveries in their order once the database answers, then goes straight again', async () => {
    const { harness, store, parking, inbox } = setUp();
    inbox.downTenants.add('acme');
    const wires = [of('acme', 1, 'k1'), of('acme', 2, 'k1'), of('acme', 3, 'k2')];
    await harness.withTimePassing(harness.handle(wires[0]));
    await harness.handleBatch(wires.slice(1));
    expect(store.rows).toHaveLength(3);

    harness.pipeline.resume();
    // Still away: a look tries the first batch, waits at most 2 s, and leaves it parked (never parked twice).
    await harness.clock.advance(1_000);
    await harness.withTimePassing(new Promise((resolve) => setImmediate(resolve)));
    await harness.clock.advance(3_000);
    expect(store.rows.map((r) => idOf(r.wire))).toEqual(wires.map(idOf));
    expect(harness.calls).toEqual([]);

    inbox.downTenants.delete('acme');
    for (let i = 0; i < 30 && store.rows.length > 0; i++) await harness.clock.advance(500);
    expect(store.rows).toEqual([]);
    expect(harness.calls.map((c) => c.messageId)).toEqual(wires.map(idOf));
    for (let i = 0; i < 10 && parking.isParked(GROUP, 'acme'); i++) await harness.clock.advance(100);
    expect(parking.isParked(GROUP, 'acme')).toBe(false);

    // Straight again: the next one runs at once, nothing parked.
    const next = of('acme', 4, 'k1');
    await expect(harness.handle(next)).resolves.toEqual({ kind: 'ACK' });
    expect(harness.calls.map((c) => c.messageId).at(-1)).toBe(idOf(next));
    expect(store.rows).toEqual([]);
    await parking.pause();
  });

  it("locks nothing in the service's database for a lane whose tenant's database does not answer, and drains it once it does", async () => {
    const { harness, store, parking, inbox, tenants } = setUp();
    inbox.downTenants.add('acme');
    tenants.silent.add('acme');
    const wires = [of('acme', 1, 'k1'), of('acme', 2, 'k2')];
    await harness.withTimePassing(harness.handle(wires[0]));
    await harness.handleBatch(wires.slice(1));
    expect(store.rows).toHaveLength(2);

    harness.pipeline.resume();
    // A minute of looks: each asks acme's database (with backoff, up to 5 s apart), none begins a drain.
    for (let i = 0; i < 60; i++) await harness.clock.advance(1_000);
    expect(store.drains).toBe(0);
    expect(tenants.asked.length).toBeGreaterThan(10);
    expect(tenants.asked.length).toBeLessThan(20);
    expect(harness.calls).toEqual([]);

    inbox.downTenants.delete('acme');
    tenants.silent.delete('acme');
    for (let i = 0; i < 30 && store.rows.length > 0; i++) await harness.clock.advance(500);
    expect(store.rows).toEqual([]);
    expect(harness.calls.map((c) => c.messageId)).toEqual(wires.map(idOf));
    await parking.pause();
  });

  it("keeps waiting, as without parking, when the service's database refuses the write", async () => {
    const { harness, store, inbox } = setUp();
    inbox.downTenants.add('acme');
    store.failWrites = 1_000;
    const wire = of('acme', 1, 'k1');
    const settled = harness.handle(wire);
    for (let i = 0; i < 40; i++) await harness.clock.advance(250);
    expect(store.rows).toEqual([]);
    inbox.downTenants.delete('acme');
    await expect(harness.withTimePassing(settled)).resolves.toEqual({ kind: 'ACK' });
    expect(harness.calls.map((c) => c.messageId)).toEqual([idOf(wire)]);
  });
});

/** One step of a random run: a lane's batch arrives, acme's database goes or comes back, time passes, … */
type Step =
  | {
      readonly kind: 'deliver';
      readonly tenant: 'acme' | 'globex';
      readonly key: 'k1' | 'k2';
      readonly count: number;
    }
  | { readonly kind: 'down' | 'up' }
  | { readonly kind: 'time'; readonly ms: number }
  /** The service's database refuses the next `count` parking writes. */
  | { readonly kind: 'refuseParking'; readonly count: number };

const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('deliver' as const),
        tenant: fc.constantFrom('acme' as const, 'globex' as const),
        key: fc.constantFrom('k1' as const, 'k2' as const),
        count: fc.integer({ min: 1, max: 3 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('down' as const, 'up' as const) }) },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 50, max: 3_000 }) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('refuseParking' as const),
        count: fc.integer({ min: 1, max: 3 }),
      }),
    },
  ),
  { maxLength: 25 },
);

const DOWN: Step = { kind: 'down' };
const UP: Step = { kind: 'up' };
const TIME = (ms: number): Step => ({ kind: 'time', ms });
const acme = (count: number): Step => ({ kind: 'deliver', tenant: 'acme', key: 'k1', count });

describe(`${TenantParking.name} (properties)`, () => {
  useQuietLogs();

  // claim: C-116
  it("whatever the interleaving of deliveries, outages, drains and refused parking: each message applied once, each lane's in order", async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (script) => {
        const { harness, store, parking, inbox } = setUp();
        harness.pipeline.resume();
        /** Each lane (tenant and key) hands its batches over one after the other, as a transport does. */
        const lanes = new Map<string, Promise<void>>();
        const delivered = new Map<string, string[]>();
        const settlements: Settlement[] = [];
        let orderId = 0;
        for (const step of script) {
          if (step.kind === 'deliver') {
            const lane = `${step.tenant}/${step.key}`;
            const wires = Array.from({ length: step.count }, () => of(step.tenant, ++orderId, step.key));
            delivered.set(lane, [...(delivered.get(lane) ?? []), ...wires.map(idOf)]);
            const previous = lanes.get(lane) ?? Promise.resolve();
            lanes.set(
              lane,
              previous.then(async () => void settlements.push(...(await harness.handleBatch(wires)))),
            );
            await harness.clock.advance(0);
          } else if (step.kind === 'down') inbox.downTenants.add('acme');
          else if (step.kind === 'up') inbox.downTenants.delete('acme');
          else if (step.kind === 'time') await harness.clock.advance(step.ms);
          else if (step.kind === 'refuseParking') store.failWrites = step.count;
        }
        // The end: every database answers; time passes until every lane is settled and nothing is parked.
        inbox.downTenants.clear();
        store.failWrites = 0;
        let settled = false;
        const all = Promise.all(lanes.values()).then(() => (settled = true));
        const quiet = () => settled && store.rows.length === 0 && !parking.isParked(GROUP, 'acme');
        for (let i = 0; i < 400 && !quiet(); i++) await harness.clock.advance(250);
        await all;
        await parking.pause();

        const count = [...delivered.values()].reduce((sum, ids) => sum + ids.length, 0);
        expect(settlements).toHaveLength(count);
        expect(settlements.every((s) => s.kind === 'ACK')).toBe(true);
        expect(store.rows).toEqual([]);
        const calls = harness.calls.map((c) => c.messageId);
        expect(new Set(calls).size).toBe(calls.length); // none twice
        for (const ids of delivered.values()) {
          expect(calls.filter((id) => ids.includes(id))).toEqual(ids); // all, in the lane's order
        }
      }),
      {
        numRuns: 300,
        examples: [
          // Parked, the database back, the key's next one: it goes behind the parked one, not before it.
          [[DOWN, acme(1), TIME(3_000), UP, acme(1)]],
          // A drain waiting for the database; one parked behind meanwhile; the drain ends: the lane stays
          // parked while that one is there (the next one goes behind it too).
          [[DOWN, acme(1), TIME(2_000), UP, acme(1), TIME(300), acme(1)]],
        ],
      },
    );
  });
});
