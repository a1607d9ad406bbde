import {
  createOutboxPublication,
  debeziumOutboxConnector,
  dropOutboxSlot,
} from '../../tools/infra/debezium-outbox';
import { KafkaConnectWorker } from '../../tools/infra/kafka-connect';
import { infraEnv } from './infra';
import type { PostgresCluster } from './postgres-cluster';

/** Where the Debezium relay reads and writes. */
export interface DebeziumRelayOptions {
  /** A cluster with `wal_level = logical` (`LOGICAL_DECODING_SETTINGS`), reached as `postgres`. */
  readonly cluster: PostgresCluster;
  /** The outbox's database on the cluster. Default `postgres`. */
  readonly database?: string;
  /** The outbox's schema in that database. */
  readonly schema: string;
  /** Default: the suite's Kafka (`infraEnv().kafkaBrokers`). */
  readonly brokers?: readonly string[];
  /** Slot and publication name. Default `debezium_outbox`. */
  readonly slot?: string;
  /** More connector settings (`poll.interval.ms`, …). */
  readonly extra?: Readonly<Record<string, string>>;
  readonly log?: (line: string) => void;
}

/** What `pg_replication_slots` says of the Debezium slot. */
export interface DebeziumSlot {
  readonly active: boolean;
  /** `confirmed_flush_lsn` as a number of bytes. */
  readonly confirmed: bigint;
}

/**
 * Debezium relaying a suite's outbox (`relay.mode: 'external'`): a standalone Kafka Connect worker with the
 * connector of docs/guide/14-debezium.md, on a private cluster. `start` makes the publication (once) and
 * resolves when the connector streams from its slot: a message committed after that is Debezium's to publish.
 */
export class DebeziumRelay {
  private constructor(
    private readonly options: DebeziumRelayOptions,
    readonly worker: KafkaConnectWorker,
  ) {}

  get slotName(): string {
    return this.options.slot ?? 'debezium_outbox';
  }

  static async start(options: DebeziumRelayOptions): Promise<DebeziumRelay> {
    const { cluster, schema } = options;
    const slot = options.slot ?? 'debezium_outbox';
    const database = options.database ?? 'postgres';
    const sql = (text: string) => cluster.query(text, [], database);
    const [existing] = await cluster.query(
      'select 1 from pg_publication where pubname = $1',
      [slot],
      database,
    );
    if (!existing) await createOutboxPublication(sql, schema, slot);
    const worker = await KafkaConnectWorker.start({
      brokers: options.brokers ?? infraEnv().kafkaBrokers,
      connectors: [
        debeziumOutboxConnector({
          database: { host: '127.0.0.1', port: cluster.port, user: 'postgres', dbname: database },
          schema,
          slot,
          extra: options.extra,
        }),
      ],
      log: options.log,
    });
    const relay = new DebeziumRelay(options, worker);
    await relay.waitUntilStreaming();
    return relay;
  }

  /** Starts the worker again after `stop()` or `kill()`: it resumes from its offsets and the slot. */
  async restart(): Promise<void> {
    await this.worker.start();
    await this.waitUntilStreaming();
  }

  /** The worker's JVM while it runs (its CPU time: /proc). */
  pid(): Promise<number | undefined> {
    return this.worker.pid();
  }

  /** Stops the worker (its task commits its offsets); the slot stays and keeps what it has not confirmed. */
  stop(): Promise<void> {
    return this.worker.stop();
  }

  /** SIGKILL of the worker: what it sent since its last offset commit is sent again after a restart. */
  kill(): Promise<void> {
    return this.worker.kill();
  }

  /** The slot's state, undefined while it does not exist. */
  async slot(): Promise<DebeziumSlot | undefined> {
    const [row] = await this.options.cluster.query<{ active: boolean; confirmed: string | null }>(
      `select active, (confirmed_flush_lsn - '0/0')::text as confirmed from pg_replication_slots where slot_name = $1`,
      [this.slotName],
    );
    return row ? { active: row.active, confirmed: BigInt(row.confirmed ?? '0') } : undefined;
  }

  /** The cluster's WAL position now (`pg_current_wal_lsn()`), in bytes. */
  async walPosition(): Promise<bigint> {
    const [row] = await this.options.cluster.query<{ lsn: string }>(
      "select (pg_current_wal_lsn() - '0/0')::text as lsn",
    );
    return BigInt(row.lsn);
  }

  /**
   * Resolves once Debezium confirmed the slot up to `lsn` (taken after the commits it must have published):
   * its offsets, so everything before, are committed. Needs later traffic on the outbox (or heartbeats).
   */
  async waitUntilConfirmed(lsn: bigint, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const slot = await this.slot();
      if (slot && slot.confirmed >= lsn) return;
      if (Date.now() > deadline) {
        throw new Error(
          `Debezium's slot confirmed ${slot?.confirmed ?? 'nothing'}, not ${lsn}, within ${timeoutMs} ms.\n` +
            (await this.worker.logTail()),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Stops the worker, drops the slot and the publication, removes the worker's folder. */
  async destroy(): Promise<void> {
    await this.worker.destroy();
    const database = this.options.database ?? 'postgres';
    await dropOutboxSlot((sql) => this.options.cluster.query(sql, [], database), this.slotName).catch(
      () => undefined,
    );
  }

  /** Until the slot exists and the connector's replication connection reads it. */
  private async waitUntilStreaming(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.slot())?.active) {
      if (Date.now() > deadline) {
        throw new Error(`Debezium's slot '${this.slotName}' is not read.\n${await this.worker.logTail()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
