import { randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import {
  createReplicationSegmentMutexConcurrencyController,
  DatabaseSetup,
  getDisabledLogger,
  initializeMessageStorage,
  initializePollingMessageListener,
  initializeReplicationMessageListener,
  PollingListenerConfig,
  ReplicationListenerConfig,
  TransactionalMessage,
} from 'pg-transactional-outbox';
import { encodeEnvelope, WireMessage } from 'nest-reliable-messaging/testing';
import { BENCH_EVENT_TYPE, benchPayload, keyOf } from './bench-event';
import { TransportKind } from './plan';
import { rawPublisher, RawPublisher } from './raw-publishers';

const TABLE = 'outbox';
const NEXT_MESSAGES = 'next_outbox_messages';

/** Writes business rows with the peer's outbox messages. */
export interface PeerWriter {
  readonly place: (run: string, seq: number) => Promise<void>;
  readonly close: () => Promise<void>;
}

/**
 * How the peer's listener runs (see bench/README.md, figure 6): its polling listener, or its logical
 * replication listener (needs `wal_level = logical`: a private cluster).
 */
export type PeerListener =
  | {
      readonly kind: 'polling';
      /** Messages per poll (`nextMessagesBatchSize`; its default 5). */
      readonly batchSize: number;
      /** `nextMessagesPollingIntervalInMs` (its default 500). */
      readonly pollMs: number;
      /** The rows' `concurrency`: 'sequential' keeps a segment's (our key's) order, 'parallel' does not. */
      readonly concurrency: 'sequential' | 'parallel';
      /**
       * Full batches from the first poll (a `batchSizeStrategy` of its own) instead of its default strategy,
       * which takes one message per poll for the first `batchSize` polls (poison protection).
       */
      readonly fullBatches: boolean;
    }
  | {
      readonly kind: 'replication';
      /** Its segment mutex concurrency controller: one message of a segment at a time, segments in parallel. */
      readonly concurrency: 'segment-mutex';
    };

/** A peer configuration of figure 6. */
export interface PeerConfig {
  readonly id: string;
  readonly label: string;
  readonly listener: PeerListener;
}

/**
 * pg-transactional-outbox on the same PostgreSQL server (polling) or on a private one (replication) and the
 * same broker: its own outbox table (and polling function or publication and slot) in `schema`, created with
 * its `DatabaseSetup` SQL, its message storage in the writer's transaction, and a publisher that puts each
 * message on the wire in the library's envelope (so that the same consumer handles it) and resolves once the
 * broker confirmed it. Its max-attempts and poison protections are off, as its README suggests for an outbox.
 */
export class PgTransactionalOutboxPeer {
  private readonly logger = getDisabledLogger();
  private readonly slot: string;

  constructor(
    private readonly databaseUrl: string,
    private readonly schema: string,
    private readonly destination: string,
    private readonly listener: PeerListener,
  ) {
    this.slot = `${schema}_slot`;
  }

  private get baseSettings() {
    return {
      dbSchema: this.schema,
      dbTable: TABLE,
      enableMaxAttemptsProtection: false,
      enablePoisonousMessageProtection: false,
      messageCleanupIntervalInMs: 0,
    };
  }

  private pollingConfig(listener: Extract<PeerListener, { kind: 'polling' }>): PollingListenerConfig {
    return {
      outboxOrInbox: 'outbox',
      dbListenerConfig: { connectionString: this.databaseUrl },
      settings: {
        ...this.baseSettings,
        nextMessagesFunctionName: NEXT_MESSAGES,
        nextMessagesFunctionSchema: this.schema,
        nextMessagesBatchSize: listener.batchSize,
        nextMessagesPollingIntervalInMs: listener.pollMs,
      },
    };
  }

  private replicationConfig(): ReplicationListenerConfig {
    return {
      outboxOrInbox: 'outbox',
      dbListenerConfig: { connectionString: this.databaseUrl },
      settings: {
        ...this.baseSettings,
        dbPublication: `${this.schema}_pub`,
        dbReplicationSlot: this.slot,
      },
    };
  }

  /** Creates the peer's table and its polling function and indexes, or its publication and slot. */
  async setup(client: Client): Promise<void> {
    const setup = {
      outboxOrInbox: 'outbox' as const,
      database: 'bench',
      schema: this.schema,
      table: TABLE,
      listenerRole: 'postgres',
      nextMessagesName: NEXT_MESSAGES,
      publication: `${this.schema}_pub`,
      replicationSlot: this.slot,
    };
    await client.query(`set search_path to "${this.schema}"`);
    await client.query(DatabaseSetup.dropAndCreateTable(setup));
    if (this.listener.kind === 'polling') {
      await client.query(DatabaseSetup.createPollingFunction(setup));
      await client.query(DatabaseSetup.setupPollingIndexes(setup));
    } else {
      await client.query(
        `create publication ${setup.publication} for table "${this.schema}".${TABLE} with (publish = 'insert')`,
      );
      // In a transaction of its own (the slot must not be created in one that wrote).
      await client.query(`select pg_create_logical_replication_slot($1, 'pgoutput')`, [this.slot]);
    }
    await client.query(
      `create table "${this.schema}".bench_orders (id serial primary key, key text, seq integer)`,
    );
    await client.query('reset search_path');
  }

  /** Drops the replication slot (it would keep WAL). */
  async teardown(client: Client): Promise<void> {
    if (this.listener.kind !== 'replication') return;
    await client.query(
      'select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1',
      [this.slot],
    );
  }

  /** Inserts pending messages in one statement (one per key in order: `segment` = key, sequential). */
  async fill(client: Client, run: string, rows: number, keys: number, pad: string): Promise<void> {
    await client.query(
      `insert into "${this.schema}".${TABLE} (id, aggregate_type, aggregate_id, message_type, segment, concurrency, payload, created_at)
       select gen_random_uuid(), 'bench', 'key-' || (i % $1), $2, 'key-' || (i % $1), $6,
              jsonb_build_object('run', $3::text, 'seq', i, 'key', 'key-' || (i % $1), 'pad', $4::text), clock_timestamp()
       from generate_series(0, $5::bigint - 1) as i`,
      [keys, BENCH_EVENT_TYPE, run, pad, rows, this.concurrency],
    );
  }

  /** Removes every message (between runs). */
  async clear(client: Client): Promise<void> {
    await client.query(`truncate "${this.schema}".${TABLE}`);
  }

  async processedCount(client: Client): Promise<number> {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from "${this.schema}".${TABLE} where processed_at is not null`,
    );
    return Number(rows[0].n);
  }

  private get concurrency(): 'sequential' | 'parallel' {
    return this.listener.kind === 'polling' ? this.listener.concurrency : 'sequential';
  }

  /** Starts the peer's listener; `onSent` after each confirmed publish. Returns its shutdown. */
  async startListener(kind: TransportKind, onSent: () => void): Promise<() => Promise<void>> {
    const publisher: RawPublisher = await rawPublisher(kind);
    const handler = {
      handle: async (message: TransactionalMessage) => {
        await publisher.publish([this.toWire(message)]);
        onSent();
      },
    };
    const listener = this.listener;
    let shutdown: () => Promise<void>;
    if (listener.kind === 'polling') {
      const batchSize = listener.batchSize;
      [shutdown] = initializePollingMessageListener(
        this.pollingConfig(listener),
        handler,
        this.logger,
        listener.fullBatches ? { batchSizeStrategy: () => Promise.resolve(batchSize) } : {},
      );
    } else {
      [shutdown] = initializeReplicationMessageListener(this.replicationConfig(), handler, this.logger, {
        concurrencyStrategy: createReplicationSegmentMutexConcurrencyController(),
      });
    }
    return async () => {
      await shutdown();
      await publisher.close();
    };
  }

  /** A writer: the business row and the peer's outbox message in one transaction. */
  writer(keys: number, pad: string): PeerWriter {
    const pool = new Pool({ connectionString: this.databaseUrl, max: 20 });
    pool.on('error', () => undefined); // idle clients of a dropped database
    const store = initializeMessageStorage(
      this.listener.kind === 'polling' ? this.pollingConfig(this.listener) : this.replicationConfig(),
      this.logger,
    );
    return {
      place: async (run, seq) => {
        const client = await pool.connect();
        try {
          await client.query('begin');
          const payload = benchPayload(run, seq, keys, pad);
          await client.query(`insert into "${this.schema}".bench_orders (key, seq) values ($1, $2)`, [
            payload.key,
            seq,
          ]);
          await store(
            {
              id: randomUUID(),
              aggregateType: 'bench',
              aggregateId: payload.key,
              messageType: BENCH_EVENT_TYPE,
              segment: keyOf(seq, keys),
              concurrency: this.concurrency,
              payload,
            },
            client,
          );
          await client.query('commit');
        } catch (error) {
          await client.query('rollback').catch(() => undefined);
          throw error;
        } finally {
          client.release();
        }
      },
      close: () => pool.end(),
    };
  }

  private toWire(message: TransactionalMessage): WireMessage {
    return encodeEnvelope(
      {
        messageId: message.id,
        type: message.messageType,
        destination: this.destination,
        key: message.segment ?? message.aggregateId,
        occurredAt: message.createdAt ? new Date(message.createdAt) : new Date(),
        headers: {},
      },
      JSON.stringify(message.payload),
    );
  }
}
