import { INestApplicationContext } from '@nestjs/common';
import { getRepositoryToken } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { OutboxRelay } from 'nest-reliable-messaging/testing';
import { RelayOptions } from 'nest-reliable-messaging';
import { createBenchApp } from './bench-app';
import { BenchEvent, keyOf, padding } from './bench-event';
import { BlogPollRelay } from './blog-poll-relay';
import { LatencyConfigId, TransportKind } from './plan';
import { Placer, RawPlacer } from './raw-placer';
import { BenchOrder, BenchWriter, WriterSettings } from './writer.fixture';

/** How the relay learns about a commit, per latency configuration. */
export const LATENCY_CONFIGS: Record<LatencyConfigId, { label: string; describe: string }> = {
  wakeup: {
    label: 'after-commit wake-up (library default)',
    describe: 'relay in the writing process; NOTIFY off; safety poll 10 s',
  },
  'wakeup-notify': {
    label: 'after-commit wake-up + NOTIFY',
    describe: 'relay in the writing process; NOTIFY on; safety poll 10 s',
  },
  notify: {
    label: 'NOTIFY only (relay in another instance)',
    describe: 'wake-up off: the relay runs in another application; NOTIFY on; safety poll 10 s',
  },
  'poll-100ms': {
    label: 'poll 100 ms only',
    describe: 'wake-up off (relay in another application), NOTIFY off, safety poll 100 ms',
  },
  'poll-1s': {
    label: 'poll 1 s only (library relay)',
    describe: 'wake-up off (relay in another application), NOTIFY off, safety poll 1000 ms',
  },
  'blog-1s': {
    label: 'baseline: blog post relay, 1 s poll',
    describe: "the blog post's design: every second read unsent rows, publish (confirmed), mark sent",
  },
  raw: {
    label: 'floor: raw producer → library consumer (no outbox)',
    describe:
      'the message published straight with the raw client (same guarantee as the relay), no database write: ' +
      "what the broker, the consumer and the machine give right now; from the broker's confirm to the handler start",
  },
  'raw-tx': {
    label: 'floor: business insert, then raw publish after commit → library consumer',
    describe:
      'the same business insert as the writer (one committed statement, no outbox row), then the message published ' +
      "with the raw client (same guarantee as the relay): the writer's floor for the CPU per message (issue 39)",
  },
};

/** The writer of a latency run and whatever relays for it. */
export interface LatencySetup {
  readonly writer: Placer;
  /** The library relay publishing for the writer (none for the blog post's relay). */
  readonly relay?: OutboxRelay;
  stop(): Promise<void>;
}

export interface SetupOptions {
  databaseUrl: string;
  schema: string;
  transport: TransportKind;
  event: BenchEvent;
  payloadBytes: number;
  keys: number;
}

/**
 * Starts configuration `id`. "Wake-up off" is a relay in another application: the after-commit signal is
 * in-process, so it never reaches it, exactly as for a relay instance that did not write the row.
 */
export async function startLatencySetup(id: LatencyConfigId, options: SetupOptions): Promise<LatencySetup> {
  if (id === 'raw') {
    const placer = await RawPlacer.start(
      options.transport,
      options.event,
      options.payloadBytes,
      options.keys,
    );
    return { writer: placer, stop: () => placer.stop() };
  }
  if (id === 'raw-tx') return startRawAfterCommit(options);
  const stops: Array<() => Promise<void>> = [];
  const app = (relay: RelayOptions, withWriter: boolean): Promise<INestApplicationContext> =>
    createBenchApp({
      databaseUrl: options.databaseUrl,
      schema: options.schema,
      transport: options.transport,
      serviceName: withWriter ? 'bench-writer' : 'bench-relay',
      relay,
      poolSize: withWriter ? 20 : 10,
      entities: withWriter ? [BenchOrder] : [],
      providers: withWriter
        ? [
            BenchWriter,
            {
              provide: WriterSettings,
              useValue: new WriterSettings(options.event, padding(options.payloadBytes), options.keys),
            },
          ]
        : [],
    });
  const writerRelay: Record<Exclude<LatencyConfigId, 'raw' | 'raw-tx'>, RelayOptions> = {
    wakeup: {},
    'wakeup-notify': { notify: true },
    notify: { enabled: false, notify: true },
    'poll-100ms': { enabled: false },
    'poll-1s': { enabled: false },
    'blog-1s': { enabled: false },
  };
  const otherRelay: Partial<Record<LatencyConfigId, RelayOptions>> = {
    notify: { notify: true },
    'poll-100ms': { pollIntervalMs: 100 },
    'poll-1s': { pollIntervalMs: 1_000 },
  };
  try {
    const writerApp = await app(writerRelay[id], true);
    stops.push(() => writerApp.close());
    let relay = writerRelay[id].enabled === false ? undefined : writerApp.get(OutboxRelay);
    const relayOptions = otherRelay[id];
    if (relayOptions) {
      const relayApp = await app(relayOptions, false);
      stops.push(() => relayApp.close());
      relay = relayApp.get(OutboxRelay);
    }
    if (id === 'blog-1s') {
      const blog = await new BlogPollRelay(options.transport, options.databaseUrl, options.schema).start();
      stops.push(() => blog.stop());
    }
    return {
      writer: writerApp.get(BenchWriter),
      relay,
      stop: async () => {
        for (const stop of stops.reverse()) await stop();
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    throw error;
  }
}

/**
 * The writer's floor: the business row inserted through the same TypeORM entity and pool as the writer's
 * (no relay, no outbox row), and once it committed, the message published with the raw client.
 */
async function startRawAfterCommit(options: SetupOptions): Promise<LatencySetup> {
  const app = await createBenchApp({
    databaseUrl: options.databaseUrl,
    schema: options.schema,
    transport: options.transport,
    serviceName: 'bench-raw-writer',
    relay: { enabled: false },
    poolSize: 20,
    entities: [BenchOrder],
  });
  try {
    const orders = app.get<Repository<BenchOrder>>(getRepositoryToken(BenchOrder));
    const placer = await RawPlacer.start(
      options.transport,
      options.event,
      options.payloadBytes,
      options.keys,
      async (_run, seq) => {
        await orders.insert({ key: keyOf(seq, options.keys), seq });
      },
    );
    return {
      writer: placer,
      stop: async () => {
        await placer.stop();
        await app.close();
      },
    };
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
}
