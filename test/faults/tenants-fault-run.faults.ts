import { TestingModule } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { MessagingTenants } from 'nest-reliable-messaging';
import { describeLoad, measureMachine } from '../../bench/lib/machine';
import { eventually } from '../harness/eventually';
import { FaultProxy } from '../harness/fault-proxy';
import { infraEnv } from '../harness/infra';
import { createTestDatabase, TestDatabase } from '../harness/test-database';
import {
  Applied,
  appliedObservers,
  closeTenantsSuite,
  createTenantsApp,
  noteWritten,
  Notes,
  TENANT_BROKERS,
  tenantDataSource,
  TenantsBroker,
} from '../integration/tenants/tenants.fixture';

/** How long the tenant's database stays down (issue 43: "for a minute"); shorter with TENANTS_OUTAGE_MS. */
const OUTAGE_MS = Number(process.env.TENANTS_OUTAGE_MS ?? 60_000);
/** Writes per second to each tenant, all the run long (the down tenant's are refused meanwhile). */
const RATE_PER_TENANT = 10;
const BEFORE_MS = 10_000;
const AFTER_MS = 10_000;
/** `tenants.parkAfterMs` (the library's default when unset); a very large value runs the fault run without parking. */
const PARK_AFTER_MS = process.env.TENANTS_PARK_AFTER_MS
  ? Number(process.env.TENANTS_PARK_AFTER_MS)
  : undefined;

type Phase = 'before' | 'outage' | 'after';

interface Write {
  readonly tenant: string;
  readonly phase: Phase;
  readonly messageId: string;
  readonly committedAt: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * Issue 43, item 3's fault run: three tenant databases (two PostgreSQL, one MariaDB) written at a steady rate
 * through one service, whose one relay and one consumer group serve them all (on RabbitMQ, then on Kafka). One
 * PostgreSQL tenant's
 * database becomes unreachable for a minute under that load (its connections cut, new ones refused, through a
 * fault proxy). Asserted: every write that committed, in every phase, is applied exactly once, in its own
 * tenant's database and no other; the down tenant's writes are refused in the caller meanwhile, and it takes
 * writes again after; none of the other tenants' messages during the outage waits anywhere near its length
 * (at most half of it), although the down tenant's deliveries in the consumer at the cut wait there for its
 * database. The latencies of each phase are printed (commit → handler), with how busy the machine was.
 */
describe.each(TENANT_BROKERS)(
  'Tenants fault run: one tenant database down for a minute under load (%s)',
  (label, kind) => {
    const broker = new TenantsBroker(kind);
    const databases: TestDatabase[] = [];
    const dataSources: DataSource[] = [];
    let proxy: FaultProxy;
    let app: TestingModule | undefined;

    afterAll(async () => {
      await closeTenantsSuite({ app, proxy, dataSources, databases, broker });
    }, 60_000);

    it('keeps the others flowing, refuses the down tenant in the caller, and loses nothing', async () => {
      const db = new URL(infraEnv().databaseUrl);
      proxy = await FaultProxy.start({ target: { host: db.hostname, port: Number(db.port || 5432) } });
      const home = await createTestDatabase('postgres', 'tfr_home');
      const acmeDb = await createTestDatabase('postgres', 'tfr_acme');
      const globexDb = await createTestDatabase('mariadb', 'tfr_globex');
      const initechDb = await createTestDatabase('postgres', 'tfr_initech');
      databases.push(home, acmeDb, globexDb, initechDb);
      const viaProxy = new URL(infraEnv().databaseUrl);
      viaProxy.host = proxy.address;
      const sources = {
        acme: await tenantDataSource(acmeDb),
        globex: await tenantDataSource(globexDb),
        initech: await tenantDataSource(initechDb, { url: viaProxy.toString() }),
      };
      dataSources.push(...Object.values(sources));
      const { destination, group } = broker.destination('tenant_fault');
      let notes: Notes;
      ({ moduleRef: app, notes } = await createTenantsApp({
        home,
        transport: broker.transport(),
        event: noteWritten(destination),
        group,
        ...(PARK_AFTER_MS !== undefined ? { parkAfterMs: PARK_AFTER_MS } : {}),
        // No retry policy (retries are opt-in): the down tenant's handlers are held across the cut, and when one
        // returns, the next delivery of its batch runs its query on the cut connection. That is the database
        // away, not the handler failing: it waits for the database. It used to fail like any handler and, with
        // no policy, be dead-lettered (a fresh-clone CI run found 2 committed messages not applied so).
      }));
      const tenants = app.get(MessagingTenants);
      for (const [name, source] of Object.entries(sources)) await tenants.add(name, source);

      const appliedAt = new Map<string, number>();
      const observer = (messageId: string) => {
        if (!appliedAt.has(messageId)) appliedAt.set(messageId, Date.now());
      };
      appliedObservers.add(observer);
      // Holds the down tenant's handlers across the cut (see below), so that the outage always finds some of its
      // messages in the consumer, in the lanes the other tenants' keys hash to as well.
      let holding: Promise<void> | undefined;
      let held = 0;
      const holder = (_messageId: string, tenant: string | undefined) => {
        if (tenant !== 'initech' || !holding) return undefined;
        held++;
        return holding;
      };
      appliedObservers.add(holder);
      const writes: Write[] = [];
      const refused = { before: 0, outage: 0, after: 0 };
      const unexpected: string[] = [];
      let phase: Phase = 'before';
      let outageFrom = Infinity;
      let writing = true;
      let seq = 0;
      // How busy the machine was in each phase: a slow phase on a busy machine reads differently.
      const loads: Partial<Record<Phase, string>> = {};
      const phaseFor = async (at: Phase, ms: number) => {
        const { load } = await measureMachine(() => new Promise((resolve) => setTimeout(resolve, ms)));
        if (load) loads[at] = describeLoad(load);
      };
      // One writer per tenant, each at its rate, scheduled (a slow or refused write does not delay the next).
      const writer = async (tenant: string): Promise<void> => {
        const pending: Promise<void>[] = [];
        const start = Date.now();
        for (let i = 0; writing; i++) {
          const wait = start + (i * 1000) / RATE_PER_TENANT - Date.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          const at = phase;
          pending.push(
            tenants
              .run(tenant, () => notes.write(`${tenant}-${at}-${seq++}`))
              .then((messageId) => {
                writes.push({ tenant, phase: at, messageId, committedAt: Date.now() });
              })
              .catch((error: unknown) => {
                // A write of the down tenant may fail once the outage began (one in flight at the cut too).
                if (tenant !== 'initech' || Date.now() < outageFrom)
                  unexpected.push(`${tenant} ${at}: ${String(error)}`);
                else refused[at]++;
              }),
          );
        }
        await Promise.all(pending);
      };
      try {
        const writers = Promise.all(Object.keys(sources).map(writer));
        await phaseFor('before', BEFORE_MS);
        // The cut finds initech's messages in the consumer: held in their handlers, their transactions open.
        let release!: () => void;
        holding = new Promise<void>((resolve) => (release = resolve));
        await eventually(() => expect(held).toBeGreaterThan(0), 10_000, 10);
        phase = 'outage';
        outageFrom = Date.now();
        await proxy.refuse();
        proxy.cutAll();
        holding = undefined;
        release();
        await phaseFor('outage', OUTAGE_MS);
        await proxy.heal();
        phase = 'after';
        // The down tenant takes writes again within its pool's reconnect.
        await eventually(() => tenants.run('initech', () => notes.write('initech-back')), 30_000);
        await phaseFor('after', AFTER_MS);
        writing = false;
        await writers;

        // Only the down tenant's writes failed, and only while (or right after) it was down.
        expect(unexpected).toEqual([]);
        // Every committed write applied, once, in its own tenant's database.
        await eventually(
          async () => {
            for (const [name, source] of Object.entries(sources)) {
              const rows = await source.getRepository(Applied).find();
              const ids = rows.map((row) => row.messageId);
              expect(new Set(ids).size).toBe(ids.length);
              expect(rows.every((row) => row.tenant === name && row.text.startsWith(`${name}-`))).toBe(true);
              const expected = writes.filter((w) => w.tenant === name).map((w) => w.messageId);
              expect(ids.filter((id) => expected.includes(id))).toHaveLength(expected.length);
            }
          },
          120_000,
          500,
        );
      } finally {
        writing = false;
        appliedObservers.delete(observer);
        appliedObservers.delete(holder);
      }

      // The others during the outage: commit → handler of each of their messages.
      const report: string[] = [];
      const othersDuringOutage: number[] = [];
      for (const tenant of Object.keys(sources)) {
        for (const at of ['before', 'outage', 'after'] as const) {
          const latencies = writes
            .filter((w) => w.tenant === tenant && w.phase === at)
            .map((w) => (appliedAt.get(w.messageId) ?? Infinity) - w.committedAt)
            .sort((a, b) => a - b);
          if (latencies.length === 0) continue;
          report.push(
            `${tenant} ${at}: ${latencies.length} applied, commit → handler p50 ${percentile(latencies, 50)} ms, ` +
              `p99 ${percentile(latencies, 99)} ms, max ${latencies[latencies.length - 1]} ms`,
          );
          if (tenant !== 'initech' && at === 'outage') othersDuringOutage.push(...latencies);
        }
      }
      console.log(
        `[tenants fault run, ${label}] initech unreachable ${OUTAGE_MS / 1000} s under ${RATE_PER_TENANT}/s per tenant; ` +
          `initech's writes refused in the caller: ${refused.outage} during, ${refused.after} after\n` +
          report.join('\n') +
          `\nthe machine: ${(['before', 'outage', 'after'] as const).map((at) => `${at} ${loads[at] ?? 'not measured'}`).join('; ')}`,
      );
      expect(refused.outage).toBeGreaterThan(0);
      // When some were slow, when: seconds since the cut, so a failure can be laid beside the consumer's log.
      const slowOnes = writes
        .filter((w) => w.tenant !== 'initech' && w.phase === 'outage')
        .map((w) => ({ w, latency: (appliedAt.get(w.messageId) ?? Infinity) - w.committedAt }))
        .filter(({ latency }) => latency > 1_000)
        .slice(0, 30)
        .map(
          ({ w, latency }) =>
            `${w.tenant} +${((w.committedAt - outageFrom) / 1000).toFixed(1)} s: ${latency} ms`,
        );
      if (slowOnes.length > 0)
        console.log(
          `[tenants fault run, ${label}] others' messages slower than 1 s (commit time after the cut):\n${slowOnes.join('\n')}`,
        );
      // The down tenant's messages held at the cut wait in the consumer for their database, the outage long;
      // the other tenants' keys that hash alike go on in lanes and slots of their own (KeyedLanes' shares). A CI
      // run before that saw one of theirs wait 63 s, the outage's length; holding initech's handlers across the
      // cut makes every run meet that case (the slowest was about 60 s before the fix). So the bound is what
      // tells "waited for the down tenant's database" (the outage's length) from "ran on a busy machine": half
      // the outage. Not a latency figure: those are printed above, beside how busy the machine was, and follow
      // its load (a CI run at load average 20: Kafka's phase before the outage had a p99 of 6.5 s, the outage
      // 0.25 s at load 12; on a quiet machine both phases' p99 stay under 0.3 s on both brokers).
      const slowest = Math.max(...othersDuringOutage);
      console.log(
        `[tenants fault run, ${label}] ${held} of initech's deliveries held across the cut; the other tenants' slowest ` +
          `message during the outage: ${slowest} ms`,
      );
      expect(slowest).toBeLessThan(OUTAGE_MS / 2);
      expect(writes.filter((w) => w.tenant === 'initech' && w.phase === 'after').length).toBeGreaterThan(0);
    }, 300_000);
  },
);
