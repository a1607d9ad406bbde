import { randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import {
  DatabaseSetup,
  getDisabledLogger,
  initializeMessageStorage,
  initializePollingMessageListener,
  PollingListenerConfig,
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

/** The peer's polling interval: its default (`TRX_NEXT_MESSAGES_POLLING_INTERVAL_IN_MS`). */
export const PEER_POLL_MS = 500;

/**
 * pg-transactional-outbox (polling listener) on the same PostgreSQL and broker: its own outbox table and
 * polling function in `schema` (created with its `DatabaseSetup` SQL), its message storage in the writer's
 * transaction, and a publisher that puts each message on the wire in the library's envelope (so that the
 * same consumer handles it) and resolves once the broker confirmed it.
 */
export class PgTransactionalOutboxPeer {
  private readonly logger = getDisabledLogger();
  private readonly config: PollingListenerConfig;

  constructor(
    private readonly databaseUrl: string,
    private readonly schema: string,
    private readonly destination: string,
    batchSize: number,
  ) {
    this.config = {
      outboxOrInbox: 'outbox',
      dbListenerConfig: { connectionString: databaseUrl },
      settings: {
        dbSchema: schema,
        dbTable: TABLE,
        enableMaxAttemptsProtection: false,
        enablePoisonousMessageProtection: false,
        nextMessagesFunctionName: NEXT_MESSAGES,
        nextMessagesFunctionSchema: schema,
        nextMessagesBatchSize: batchSize,
        nextMessagesPollingIntervalInMs: PEER_POLL_MS,
        messageCleanupIntervalInMs: 0,
      },
    };
  }

  /** Creates the peer's table, polling function and indexes. */
  async setup(client: Client): Promise<void> {
    const setup = {
      outboxOrInbox: 'outbox' as const,
      database: 'bench',
      schema: this.schema,
      table: TABLE,
      listenerRole: 'postgres',
      nextMessagesName: NEXT_MESSAGES,
    };
    await client.query(`set search_path to "${this.schema}"`);
    await client.query(DatabaseSetup.dropAndCreateTable(setup));
    await client.query(DatabaseSetup.createPollingFunction(setup));
    await client.query(DatabaseSetup.setupPollingIndexes(setup));
    await client.query(
      `create table "${this.schema}".bench_orders (id serial primary key, key text, seq integer)`,
    );
    await client.query('reset search_path');
  }

  /** Inserts pending messages in one statement (one per key in order: `segment` = key, sequential). */
  async fill(client: Client, run: string, rows: number, keys: number, pad: string): Promise<void> {
    await client.query(
      `insert into "${this.schema}".${TABLE} (id, aggregate_type, aggregate_id, message_type, segment, payload, created_at)
       select gen_random_uuid(), 'bench', 'key-' || (i % $1), $2, 'key-' || (i % $1),
              jsonb_build_object('run', $3::text, 'seq', i, 'key', 'key-' || (i % $1), 'pad', $4::text), clock_timestamp()
       from generate_series(0, $5::bigint - 1) as i`,
      [keys, BENCH_EVENT_TYPE, run, pad, rows],
    );
  }

  async processedCount(client: Client): Promise<number> {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from "${this.schema}".${TABLE} where processed_at is not null`,
    );
    return Number(rows[0].n);
  }

  /** Starts the peer's polling listener; `onSent` after each confirmed publish. Returns its shutdown. */
  async startListener(kind: TransportKind, onSent: () => void): Promise<() => Promise<void>> {
    const publisher: RawPublisher = await rawPublisher(kind);
    const [shutdown] = initializePollingMessageListener(
      this.config,
      {
        handle: async (message: TransactionalMessage) => {
          await publisher.publish([this.toWire(message)]);
          onSent();
        },
      },
      this.logger,
    );
    return async () => {
      await shutdown();
      await publisher.close();
    };
  }

  /** A writer: the business row and the peer's outbox message in one transaction. */
  writer(keys: number, pad: string): PeerWriter {
    const pool = new Pool({ connectionString: this.databaseUrl, max: 20 });
    pool.on('error', () => undefined); // idle clients of a dropped database
    const store = initializeMessageStorage(this.config, this.logger);
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
