import { readFileSync } from 'node:fs';
import * as amqp from 'amqplib';
import { Client } from 'pg';
import { infraEnv, localKafkaPort } from '../../tools/infra/env';
import { KafkaBroker } from '../../tools/infra/kafka-broker';
import { benchKafka } from './brokers';
import { CLOCK_TICKS_PER_S, processStatFields } from './machine';
import { percentile } from './stats';
import { now } from './time';

/** A service younger than this is called fresh: its JIT, caches and page cache are still warming up. */
const FRESH_BELOW_S = 600;
const ROUND_TRIPS = 20;

/** The state of a broker or the database right before a scenario measured through it. */
export interface ServiceState {
  readonly service: string;
  /** Seconds since its process started, where it can be told (a local process). */
  readonly uptimeS?: number;
  /** What one acknowledged write costs right now: the first of `ROUND_TRIPS`, their median and maximum (ms). */
  readonly writeMs: { readonly first: number; readonly p50: number; readonly max: number };
  /** What the write is: `acks=all produce of 100 B`... */
  readonly write: string;
}

/** One line for the notes: `Kafka: up 3 min (fresh), acks=all produce of 100 B first 41 ms, p50 2.1, max 9.8`. */
export function describeState(state: ServiceState): string {
  const up =
    state.uptimeS === undefined
      ? 'uptime unknown'
      : `up ${formatUptime(state.uptimeS)} (${state.uptimeS < FRESH_BELOW_S ? 'fresh' : 'warm'})`;
  const { first, p50, max } = state.writeMs;
  return `${state.service}: ${up}; ${state.write}: first ${first.toFixed(1)} ms, p50 ${p50.toFixed(1)}, max ${max.toFixed(1)} (${ROUND_TRIPS} in a row)`;
}

/** Kafka's state: the local broker's uptime and `ROUND_TRIPS` acks=all produces to `topic`, one at a time. */
export async function kafkaState(topic: string): Promise<ServiceState> {
  const env = infraEnv();
  const pid = env.localKafka
    ? (await new KafkaBroker({ port: localKafkaPort(env) }).status()).pid
    : undefined;
  const producer = benchKafka('bench-state').producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    const writeMs = await timeEach(() =>
      producer.send({ topic, acks: -1, messages: [{ key: 'state', value: Buffer.alloc(100) }] }),
    );
    return {
      service: 'Kafka',
      uptimeS: pid === undefined ? undefined : processUptimeS(pid),
      write: 'idempotent acks=all produce of 100 B',
      writeMs,
    };
  } finally {
    await producer.disconnect();
  }
}

/** RabbitMQ's state: `ROUND_TRIPS` persistent publishes to `exchange`, each confirmed before the next. */
export async function rabbitState(exchange: string): Promise<ServiceState> {
  const connection = await amqp.connect(infraEnv().amqpUrl);
  try {
    const channel = await connection.createConfirmChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const writeMs = await timeEach(async () => {
      channel.publish(exchange, 'state', Buffer.alloc(100), { persistent: true });
      await channel.waitForConfirms();
    });
    return { service: 'RabbitMQ', write: 'confirmed persistent publish of 100 B', writeMs };
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** PostgreSQL's state: its uptime and `ROUND_TRIPS` committed one-row inserts (a WAL flush each). */
export async function postgresState(databaseUrl: string): Promise<ServiceState> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ up: number }>(
      'select extract(epoch from now() - pg_postmaster_start_time())::float8 as up',
    );
    await client.query('create table if not exists bench_state_probe (at timestamptz not null)');
    const writeMs = await timeEach(() => client.query('insert into bench_state_probe values (now())'));
    await client.query('drop table bench_state_probe');
    return { service: 'PostgreSQL', uptimeS: rows[0].up, write: 'committed one-row insert', writeMs };
  } finally {
    await client.end();
  }
}

async function timeEach(write: () => Promise<unknown>): Promise<ServiceState['writeMs']> {
  const times: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const started = now();
    await write();
    times.push(now() - started);
  }
  return { first: times[0], p50: percentile(times, 50), max: Math.max(...times) };
}

/** Seconds since process `pid` started (Linux /proc), or undefined. */
function processUptimeS(pid: number): number | undefined {
  const fields = processStatFields(pid);
  if (!fields) return undefined;
  try {
    const startTicks = Number(fields[19]); // field 22 of the line: start time, in clock ticks after boot
    const bootUptimeS = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
    return Math.max(0, bootUptimeS - startTicks / CLOCK_TICKS_PER_S);
  } catch {
    return undefined;
  }
}

function formatUptime(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7_200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3_600).toFixed(1)} h`;
}
