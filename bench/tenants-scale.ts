/**
 * 1 tenant against 50 at the same total rate (issue 43, item 3): what spreading one service's messages over
 * many tenant databases costs. One service with tenants on (its one relay draining every tenant's outbox in
 * turns, one consumer group applying each message in its tenant's database), each tenant a schema of its own
 * on the machine's PostgreSQL (schema per tenant), written at RATE messages a second in all, round-robin over
 * the tenants, for SECONDS after a 5 s warm-up. Both counts run in the same run, one after the other, each
 * with the same connection budget: 50 connections over the tenants (50 for the one, 1 for each of the 50), or
 * each a pool of TENANTS_POOL; TENANTS_COUNTS (default 1,50) names the counts. TENANTS_RELAY=logical: the
 * tenants' logical relays instead (each tenant's slot, read by a replication connection of its own), the
 * tenants' schemas on a private cluster of each count's own (`wal_level = logical`, room for the slots), whose
 * processes all count as PostgreSQL's CPU (the backends, the walsenders decoding the log, the writers).
 * TENANTS_LAYOUT=databases (logical only): each tenant in a database of its own on that cluster, not a schema.
 *
 *   npx ts-node --transpile-only -r tsconfig-paths/register bench/tenants-scale.ts [rabbitmq|kafka] [RATE] [SECONDS]
 *
 * Printed per count: commit → handler p50 / p99 / max; messages applied; CPU per message (µs) of this
 * process (the service: writers, relay, consumer), of PostgreSQL (the backends the tenants' pools opened,
 * by application_name) and of the broker; PostgreSQL transactions per message (pg_stat_database); beside
 * them one core's speed and the machine's load. Figures, never assertions. Its schemas, topics or queues
 * are its own, and removed.
 */
import 'reflect-metadata';
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { MessagingTenants } from 'nest-reliable-messaging';
import { createReplicationSlot, tenantLogicalNames } from 'nest-reliable-messaging/testing';
import { infraEnv } from '../tools/infra/env';
import { KafkaTopics } from '../test/harness/kafka';
import { uniqueName } from '../test/harness/names';
import { offerAtRate } from './lib/offered-load';
import { until } from './lib/time';
import { RabbitFixture } from '../test/harness/rabbitmq';
import { createTestSchema } from '../test/harness/postgres';
import {
  LOGICAL_DECODING_SETTINGS,
  PostgresCluster,
  startPrivatePostgres,
} from '../test/harness/postgres-cluster';
import { createTestDatabase, TestDatabase } from '../test/harness/test-database';
import { kafkaTransport, rabbitTransport } from '../test/integration/support/messaging-app';
import {
  appliedObservers,
  createTenantsApp,
  noteWritten,
  tenantDataSource,
} from '../test/integration/tenants/tenants.fixture';
import { withClient } from './lib/databases';
import { coreSpeedMiBps, whileMeasuring } from './lib/machine';
import { brokerPids, CpuGroup, ProcessCpuMeter } from './lib/process-cpu';
import { percentile } from './lib/stats';

const transport = (process.argv[2] ?? 'rabbitmq') as 'rabbitmq' | 'kafka';
const RATE = Number(process.argv[3] ?? 200);
const SECONDS = Number(process.argv[4] ?? 30);
/** The tenant counts, in order (`TENANTS_COUNTS=1,50`). */
const COUNTS = (process.env.TENANTS_COUNTS ?? '1,50').split(',').map(Number);
const CONNECTIONS = 50;
/** Each tenant's pool, when `TENANTS_POOL` sets one; otherwise CONNECTIONS shared out over the tenants. */
const POOL = process.env.TENANTS_POOL ? Number(process.env.TENANTS_POOL) : undefined;
const WARM_UP_S = 5;
/** `TENANTS_RELAY=logical`: the tenants' logical relays, on a private cluster per count. */
const RELAY: 'poll' | 'logical' = process.env.TENANTS_RELAY === 'logical' ? 'logical' : 'poll';
/** With the logical relays: the tenants in schemas of one database (default), or each in a database of its own. */
const LAYOUT: 'schemas' | 'databases' =
  RELAY === 'logical' && process.env.TENANTS_LAYOUT === 'databases' ? 'databases' : 'schemas';

interface Figures {
  readonly tenants: number;
  readonly offered: number;
  readonly applied: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** CPU per applied message, µs, per group of processes. */
  readonly cpuUs: Record<string, number>;
  readonly transactionsPerMessage: number;
  readonly machine?: string;
}

/**
 * Commits since the server started: in its database (all schemas: a quiet machine's is the bench's), or on a
 * private cluster in all its databases.
 */
async function commits(serverUrl: string, allDatabases: boolean): Promise<number> {
  return withClient(serverUrl, async (client) => {
    const { rows } = await client.query<{ n: string }>(
      allDatabases
        ? 'select sum(xact_commit)::text as n from pg_stat_database'
        : 'select xact_commit::text as n from pg_stat_database where datname = current_database()',
    );
    return Number(rows[0].n);
  });
}

/** The backends named `applicationName`; on a private cluster (undefined name), every process of it. */
async function backendPids(serverUrl: string, applicationName: string | undefined): Promise<number[]> {
  return withClient(serverUrl, async (client) => {
    const { rows } =
      applicationName === undefined
        ? await client.query<{ pid: number }>('select pid from pg_stat_activity')
        : await client.query<{ pid: number }>(
            'select pid from pg_stat_activity where application_name = $1',
            [applicationName],
          );
    return rows.map((row) => Number(row.pid));
  });
}

/** Writes `count` notes at RATE, round-robin over `tenants`, each write not waiting for the one before: how many failed. */
async function offer(
  tenants: MessagingTenants,
  names: readonly string[],
  write: (text: string) => Promise<string>,
  count: number,
  committedAt: Map<string, number>,
): Promise<number> {
  let failed = 0;
  await offerAtRate(count, RATE, async (i) => {
    const tenant = names[i % names.length];
    await tenants
      .run(tenant, () => write(`${tenant}-${i}-${Math.random()}`))
      .then((messageId) => void committedAt.set(messageId, performance.now()))
      .catch(() => void failed++);
  });
  return failed;
}

async function run(count: number): Promise<Figures> {
  const label = uniqueName('bts');
  const rabbit = new RabbitFixture();
  const topics = new KafkaTopics();
  const databases: TestDatabase[] = [];
  const sources: DataSource[] = [];
  const applicationName = `bench-tenants-${label}`;
  const appliedAt = new Map<string, number>();
  const observer = (messageId: string) => {
    if (!appliedAt.has(messageId)) appliedAt.set(messageId, performance.now());
  };
  let app: Awaited<ReturnType<typeof createTenantsApp>>['moduleRef'] | undefined;
  let cluster: PostgresCluster | undefined;
  try {
    if (RELAY === 'logical') {
      cluster = await startPrivatePostgres('bench-tenants', {
        settings: {
          ...LOGICAL_DECODING_SETTINGS,
          max_replication_slots: count + 10,
          max_wal_senders: count + 10,
          max_connections: CONNECTIONS + count + 50,
        },
      });
    }
    const serverUrl = cluster?.url ?? infraEnv().databaseUrl;
    const home = await createTestDatabase('postgres', `${label}_home`);
    databases.push(home);
    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      const databaseName = LAYOUT === 'databases' ? `t${i}` : 'postgres';
      if (cluster && LAYOUT === 'databases') await cluster.createDatabase(databaseName);
      const database = cluster
        ? await createTestSchema(`${label}_t${i}`, cluster.databaseUrl(databaseName))
        : await createTestDatabase('postgres', `${label}_t${i}`);
      databases.push(database);
      if (cluster) {
        const sql = <R extends object>(text: string, params?: unknown[]) =>
          cluster!.query<R>(text, params, databaseName);
        await createReplicationSlot(sql, tenantLogicalNames(`t${i}`));
      }
      sources.push(
        await tenantDataSource(database, {
          poolSize: POOL ?? Math.max(1, Math.floor(CONNECTIONS / count)),
          applicationName,
        }),
      );
      names.push(`t${i}`);
    }
    const destination = uniqueName('bench_tenants');
    const group = uniqueName('g');
    if (transport === 'rabbitmq')
      rabbit.track({
        exchanges: [destination],
        queues: [`${destination}.${group}`, `${destination}.${group}.dlq`],
      });
    else topics.track(destination, `${destination}.${group}.dlq`);
    const created = await createTenantsApp({
      home,
      transport: transport === 'rabbitmq' ? rabbitTransport() : kafkaTransport(),
      event: noteWritten(destination),
      group,
      relayMode: RELAY,
    });
    app = created.moduleRef;
    const tenants = app.get(MessagingTenants);
    for (let i = 0; i < count; i++) await tenants.add(names[i], sources[i]);
    appliedObservers.add(observer);
    const write = (text: string) => created.notes.write(text);

    // Warm-up (JIT, pools, the consumer's join and lanes): not measured; then until it was all applied.
    const warm = new Map<string, number>();
    await offer(tenants, names, write, Math.round(RATE * WARM_UP_S), warm);
    await until(() => [...warm.keys()].every((id) => appliedAt.has(id)), 60_000);

    const groups: CpuGroup[] = [
      { name: 'service (this process)', pids: () => [process.pid] },
      {
        name: 'PostgreSQL',
        pids: () => backendPids(serverUrl, cluster ? undefined : applicationName),
      },
      { name: 'broker', pids: () => brokerPids(transport) },
    ];
    const committedAt = new Map<string, number>();
    const commitsBefore = await commits(serverUrl, cluster !== undefined);
    const meter = await ProcessCpuMeter.start(groups);
    const offered = Math.round(RATE * SECONDS);
    const { result: failed, summary } = await whileMeasuring(async () => {
      const failures = await offer(tenants, names, write, offered, committedAt);
      await until(() => [...committedAt.keys()].every((id) => appliedAt.has(id)), 60_000);
      return failures;
    });
    const use = await meter.stop();
    const transactions = (await commits(serverUrl, cluster !== undefined)) - commitsBefore;
    const latencies = [...committedAt]
      .filter(([id]) => appliedAt.has(id))
      .map(([id, at]) => appliedAt.get(id)! - at)
      .sort((a, b) => a - b);
    const applied = latencies.length;
    if (failed > 0) console.log(`  ${failed} writes failed`);
    const cpuUs: Record<string, number> = {};
    for (const [name, ms] of Object.entries(use))
      cpuUs[name] = Math.round((ms * 1000) / Math.max(1, applied));
    return {
      tenants: count,
      offered,
      applied,
      p50: round(percentile(latencies, 50)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies[latencies.length - 1] ?? NaN),
      cpuUs,
      transactionsPerMessage: Math.round((transactions / Math.max(1, applied)) * 100) / 100,
      machine: summary,
    };
  } finally {
    appliedObservers.delete(observer);
    await app?.close();
    await Promise.all(sources.map((source) => source.destroy().catch(() => undefined)));
    await Promise.all(databases.map((database) => database.drop().catch(() => undefined)));
    if (transport === 'rabbitmq') await rabbit.cleanup();
    else await topics.cleanup();
    await cluster?.destroy();
  }
}

const round = (ms: number) => Math.round(ms * 10) / 10;

async function main(): Promise<void> {
  console.log(
    `tenants on ${transport}, ${RELAY === 'logical' ? 'logical relays (a private cluster per count)' : 'polling relays'}: ` +
      `${RATE} messages/s in all for ${SECONDS} s, ${COUNTS.join(' then ')} tenants ` +
      `(${LAYOUT === 'databases' ? 'a database each' : 'schemas'} on one PostgreSQL, ${POOL === undefined ? `${CONNECTIONS} connections over them` : `a pool of ${POOL} each`}); ` +
      `${os.cpus().length} cores, ` +
      `${os.cpus()[0]?.model ?? 'unknown'}; one core's SHA-256 ${coreSpeedMiBps()} MiB/s; ` +
      `load average ${os.loadavg()[0].toFixed(1)} at the start`,
  );
  const figures: Figures[] = [];
  for (const count of COUNTS) {
    const f = await run(count);
    figures.push(f);
    const cpu = Object.entries(f.cpuUs)
      .map(([name, us]) => `${name} ${us}`)
      .join(', ');
    console.log(
      `${String(f.tenants).padStart(3)} tenants: ${f.applied}/${f.offered} applied; commit → handler p50 ` +
        `${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms; CPU per message µs: ${cpu}; PostgreSQL ` +
        `transactions per message ${f.transactionsPerMessage}; ${f.machine ?? ''}`,
    );
  }
  console.log(
    JSON.stringify({
      transport,
      relay: RELAY,
      layout: LAYOUT,
      rate: RATE,
      seconds: SECONDS,
      pool: POOL ?? null,
      figures,
    }),
  );
  if (figures.length !== 2) return;
  const [one, many] = figures;
  const total = (f: Figures) => Object.values(f.cpuUs).reduce((sum, us) => sum + us, 0);
  console.log(
    `${many.tenants} ÷ ${one.tenants}: p99 ${(many.p99 / one.p99).toFixed(2)}×, CPU per message (all three) ` +
      `${(total(many) / total(one)).toFixed(2)}×, transactions per message ` +
      `${(many.transactionsPerMessage / one.transactionsPerMessage).toFixed(2)}×`,
  );
}

void main()
  .catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => setTimeout(() => process.exit(), 1_000).unref());
