import { BenchDialect } from './bench-outbox';

/** What a bench run measures and how much: the full run, or the short smoke run CI does. */
export type TransportKind = 'kafka' | 'rabbitmq';
export type ScenarioName =
  | 'throughput'
  | 'latency'
  | 'idle'
  | 'growth'
  | 'consumer'
  | 'peers'
  | 'scaling'
  | 'kafka-client'
  | 'logical'
  | 'debezium'
  | 'memory';
/** What a run without `--only` runs. */
export const SCENARIOS: readonly ScenarioName[] = [
  'throughput',
  'latency',
  'idle',
  'growth',
  'consumer',
  'peers',
  'scaling',
  'kafka-client',
  'logical',
  'debezium',
];
/** Run only when named with `--only` (they take long): see bench/README.md. */
export const OPTIONAL_SCENARIOS: readonly ScenarioName[] = ['memory'];

/** pg-transactional-outbox's configurations in figure 6 (see `scenarios/peers.ts`). */
export type PeerConfigId = 'polling-ordered' | 'polling-unordered' | 'replication';

/** How the relay is woken in a latency run (see bench/README.md). */
export type LatencyConfigId =
  'wakeup' | 'wakeup-notify' | 'notify' | 'poll-100ms' | 'poll-1s' | 'blog-1s' | 'raw' | 'raw-tx';

export interface BenchPlan {
  readonly mode: 'full' | 'smoke';
  readonly scenarios: readonly ScenarioName[];
  readonly transports: readonly TransportKind[];
  /** Databases the relay throughput and growth figures are measured on, side by side. */
  readonly databases: readonly BenchDialect[];
  /** 1. N outbox rows → broker. */
  readonly throughput: {
    rows: number;
    payloadBytes: number;
    keys: number;
    batchSize: number;
    runs: number;
  };
  /** 2. Commit → handler start at fixed offered rates. */
  readonly latency: {
    rates: readonly number[];
    windowMs: number;
    runs: number;
    configs: readonly LatencyConfigId[];
    /** Transports the whole matrix runs on; the others run the library default and the baseline only. */
    fullMatrixOn: readonly TransportKind[];
    /**
     * PostgreSQL transactions per delivered message are counted around the library default's runs at this
     * rate, the counter read `xactQuietMs` after the work before and after them.
     */
    xactRate: number;
    xactQuietMs: number;
    /** One unmeasured window at 200/s before the measured runs (warm JIT, pools, fetch loop). */
    warmUpWindow: boolean;
  };
  /** 3. Statements per second while idle. */
  readonly idle: { windowMs: number };
  /** 4. Claim time against the number of sent rows. */
  readonly growth: {
    sentRows: readonly number[];
    pending: number;
    batchSize: number;
    runs: number;
    /** Scheduled messages not yet due beside the claim and the move of due ones (issue 42: 1,000,000). */
    scheduledRows: number;
  };
  /** 5. Consumer with and without the inbox. */
  readonly consumer: { messages: number; runs: number };
  /** 6. pg-transactional-outbox on the same database and brokers. */
  readonly peers: {
    rows: number;
    runs: number;
    rates: readonly number[];
    windowMs: number;
    latencyRuns: number;
    /** Messages per latency run at most: the peer drains a backlog slowly, and a run must end. */
    maxMessages: number;
    /** A throughput run ends after this long (the rate is then over what was confirmed). */
    maxSeconds: number;
    /** Configurations of the throughput runs, and of the latency runs. */
    configs: readonly PeerConfigId[];
    latencyConfigs: readonly PeerConfigId[];
    /** How long a latency run waits for the peer's messages still missing (it loses a few now and then). */
    stallMs: number;
  };
  /** 8. Relay instances and consumer instances on one outbox / one group. */
  readonly scaling: {
    rows: number;
    relays: readonly number[];
    consumers: readonly number[];
    messages: number;
    runs: number;
  };
  /** 9. kafkajs beside @platformatic/kafka: raw producer and consumer. */
  readonly kafkaClient: { messages: number; runs: number };
  /**
   * 10. The logical relay (issue 30) on a private cluster with wal_level = logical, against the polling relay
   * and the peer's replication listener: latency at `rates` and at the writer's ceiling, throughput from a
   * backlog in the slot, the writer's cost.
   */
  readonly logical: {
    rates: readonly number[];
    windowMs: number;
    runs: number;
    /** Messages per latency run at most (the ceiling's window would be long). */
    maxMessages: number;
    /** Sequential transactions per writer-cost measurement. */
    costTransactions: number;
    /** Plain inserts that measure the writer's ceiling. */
    ceilingMessages: number;
    throughputMessages: number;
    throughputRuns: number;
    /** As in `latency`: one unmeasured window at 200/s per contender first. */
    warmUpWindow: boolean;
    /** As in `peers`: how long a run waits for the peer's messages still missing. */
    peerStallMs: number;
  };
  /**
   * 11. Debezium (issues 43 and 39): Kafka Connect with Debezium's PostgreSQL connector and its outbox event
   * router reading the library's outbox (`relay.mode: 'external'`, docs/guide/14-debezium.md) on a private
   * cluster with wal_level = logical, into the same Kafka, against the logical and the polling relay and the
   * floor: latency at `rates` and at the writer's ceiling, throughput from a backlog. Kafka only.
   */
  readonly debezium: {
    rates: readonly number[];
    windowMs: number;
    runs: number;
    /** Messages per latency run at most (the ceiling's window would be long). */
    maxMessages: number;
    /** Plain inserts that measure the writer's ceiling. */
    ceilingMessages: number;
    /** Debezium's `poll.interval.ms` of each Debezium contender (500 is its default: the guide's file). */
    pollIntervalsMs: readonly number[];
    throughputMessages: number;
    throughputRuns: number;
    /** As in `latency`: one unmeasured window at 200/s per contender first. */
    warmUpWindow: boolean;
    /** How long a run waits for messages still missing before it says so and goes on (Debezium's only). */
    stallMs: number;
  };
  /** 10. Memory of the demo services before and after `messages` (only with `--only memory`). */
  readonly memory: { messages: number; warmUp: number; chunk: number; samples: number };
}

const FULL: Omit<BenchPlan, 'scenarios' | 'transports' | 'databases'> = {
  mode: 'full',
  throughput: { rows: 20_000, payloadBytes: 1024, keys: 100, batchSize: 200, runs: 5 },
  latency: {
    rates: [50, 200, 1000],
    windowMs: 4_000,
    runs: 2,
    configs: ['wakeup', 'wakeup-notify', 'notify', 'poll-100ms', 'poll-1s', 'blog-1s', 'raw', 'raw-tx'],
    fullMatrixOn: ['kafka'],
    xactRate: 200,
    xactQuietMs: 11_000,
    warmUpWindow: true,
  },
  idle: { windowMs: 60_000 },
  growth: {
    sentRows: [0, 100_000, 1_000_000],
    pending: 1_000,
    batchSize: 200,
    runs: 15,
    scheduledRows: 1_000_000,
  },
  consumer: { messages: 5_000, runs: 3 },
  peers: {
    rows: 2_000,
    runs: 2,
    maxSeconds: 30,
    rates: [50, 200, 1000],
    windowMs: 4_000,
    latencyRuns: 1,
    maxMessages: 400,
    configs: ['polling-ordered', 'polling-unordered', 'replication'],
    latencyConfigs: ['polling-ordered', 'replication'],
    stallMs: 60_000,
  },
  scaling: { rows: 20_000, relays: [1, 2, 4], consumers: [1, 2], messages: 5_000, runs: 2 },
  kafkaClient: { messages: 20_000, runs: 5 },
  logical: {
    rates: [200],
    windowMs: 4_000,
    runs: 2,
    maxMessages: 4_000,
    costTransactions: 1_000,
    ceilingMessages: 4_000,
    throughputMessages: 20_000,
    throughputRuns: 3,
    warmUpWindow: true,
    peerStallMs: 60_000,
  },
  debezium: {
    rates: [200],
    windowMs: 4_000,
    runs: 2,
    maxMessages: 4_000,
    ceilingMessages: 4_000,
    pollIntervalsMs: [500, 10],
    throughputMessages: 20_000,
    throughputRuns: 3,
    warmUpWindow: true,
    stallMs: 60_000,
  },
  memory: { messages: 1_000_000, warmUp: 20_000, chunk: 20_000, samples: 10 },
};

const SMOKE: Omit<BenchPlan, 'scenarios' | 'transports' | 'databases'> = {
  mode: 'smoke',
  throughput: { rows: 300, payloadBytes: 1024, keys: 100, batchSize: 200, runs: 1 },
  latency: {
    rates: [200],
    windowMs: 500,
    runs: 1,
    configs: ['wakeup', 'notify', 'blog-1s', 'raw', 'raw-tx'],
    fullMatrixOn: ['kafka'],
    xactRate: 200,
    // The smoke run checks that the counting works, not what it counts: no waiting for late reports.
    xactQuietMs: 0,
    warmUpWindow: false,
  },
  idle: { windowMs: 1_000 },
  growth: { sentRows: [0, 2_000], pending: 100, batchSize: 50, runs: 3, scheduledRows: 2_000 },
  consumer: { messages: 200, runs: 1 },
  peers: {
    rows: 20,
    runs: 1,
    maxSeconds: 3,
    rates: [200],
    windowMs: 500,
    latencyRuns: 1,
    maxMessages: 20,
    // The replication listener needs a private cluster (initdb and a restart): the full run only.
    configs: ['polling-ordered'],
    latencyConfigs: ['polling-ordered'],
    stallMs: 3_000,
  },
  scaling: { rows: 400, relays: [1, 2], consumers: [], messages: 200, runs: 1 },
  kafkaClient: { messages: 400, runs: 1 },
  logical: {
    rates: [200],
    windowMs: 500,
    runs: 1,
    maxMessages: 200,
    costTransactions: 100,
    ceilingMessages: 300,
    throughputMessages: 300,
    throughputRuns: 1,
    warmUpWindow: false,
    peerStallMs: 3_000,
  },
  // Two Kafka Connect starts (latency, throughput): the smoke run checks that the peer runs, no figures.
  debezium: {
    rates: [200],
    windowMs: 500,
    runs: 1,
    maxMessages: 100,
    ceilingMessages: 300,
    pollIntervalsMs: [500],
    throughputMessages: 300,
    throughputRuns: 1,
    warmUpWindow: false,
    stallMs: 15_000,
  },
  memory: { messages: 2_000, warmUp: 500, chunk: 1_000, samples: 2 },
};

export interface PlanOverrides {
  smoke?: boolean;
  only?: readonly ScenarioName[];
  transports?: readonly TransportKind[];
  databases?: readonly BenchDialect[];
  runs?: number;
  rows?: number;
  /** Sent rows of the growth steps (the first is the baseline). */
  sent?: readonly number[];
  configs?: readonly LatencyConfigId[];
  rates?: readonly number[];
  /** Messages of the memory scenario. */
  messages?: number;
}

export function buildPlan(overrides: PlanOverrides = {}): BenchPlan {
  const base = overrides.smoke ? SMOKE : FULL;
  const runs = overrides.runs;
  return {
    ...base,
    scenarios: overrides.only?.length ? overrides.only : SCENARIOS,
    transports: overrides.transports?.length ? overrides.transports : ['kafka', 'rabbitmq'],
    databases: overrides.databases?.length ? overrides.databases : ['postgres', 'mariadb'],
    throughput: {
      ...base.throughput,
      rows: overrides.rows ?? base.throughput.rows,
      runs: runs ?? base.throughput.runs,
    },
    latency: {
      ...base.latency,
      runs: runs ?? base.latency.runs,
      configs: overrides.configs?.length ? overrides.configs : base.latency.configs,
      rates: overrides.rates?.length ? overrides.rates : base.latency.rates,
    },
    growth: {
      ...base.growth,
      sentRows: overrides.sent?.length ? overrides.sent : base.growth.sentRows,
      runs: runs ?? base.growth.runs,
    },
    consumer: { ...base.consumer, runs: runs ?? base.consumer.runs },
    peers: { ...base.peers, runs: runs ?? base.peers.runs },
    scaling: { ...base.scaling, rows: overrides.rows ?? base.scaling.rows, runs: runs ?? base.scaling.runs },
    kafkaClient: { ...base.kafkaClient, runs: runs ?? base.kafkaClient.runs },
    logical: {
      ...base.logical,
      runs: runs ?? base.logical.runs,
      throughputRuns: runs ?? base.logical.throughputRuns,
      rates: overrides.rates?.length ? overrides.rates : base.logical.rates,
    },
    debezium: {
      ...base.debezium,
      runs: runs ?? base.debezium.runs,
      throughputRuns: runs ?? base.debezium.throughputRuns,
      rates: overrides.rates?.length ? overrides.rates : base.debezium.rates,
    },
    memory: { ...base.memory, messages: overrides.messages ?? base.memory.messages },
  };
}
