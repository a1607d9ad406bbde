import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import type { ClientConfig } from 'pg';
import { DataSource } from 'typeorm';
import { CancelTimer, Clock } from '../../common/clock';
import { postgresTables } from '../../tables/postgres-tables';
import { typeormPostgresConnectionConfig } from '../../transaction/typeorm-postgres-pool.patch';
import { InvalidMessagingOptionsError } from '../../errors/invalid-messaging-options.error';
import { ReplicationSlotInvalidatedError } from '../../errors/replication-slot-invalidated.error';
import { ReplicationSlotMissingError } from '../../errors/replication-slot-missing.error';
import {
  MESSAGING_CLOCK,
  MESSAGING_DATA_SOURCE,
  MESSAGING_LOGICAL_NAMES,
  MESSAGING_RESOLVED_OPTIONS,
  MESSAGING_TENANT_RELAY,
  MESSAGING_TRANSPORT,
} from '../../messaging.constants';
import { MessageTracing } from '../../observability/message-tracing';
import { MessagingMetrics } from '../../observability/messaging-metrics';
import { RelaySlotFigures } from '../../observability/observed-sources';
import { ResolvedMessagingOptions } from '../../options/resolve-messaging-options';
import { computeRetryDelay, RECONNECT_BACKOFF } from '../../retry/backoff';
import { MessageTransport } from '../../transports/message-transport.interface';
import { RelayWakeup } from '../relay-wakeup';
import { LogicalNames } from './logical-names';
import { checkLogicalRelayServer } from './logical-relay-checks';
import { formatLsn } from './lsn';
import { ParkedMessages } from './parked-messages';
import { ReplicationConnection } from './replication-connection';
import { readReplicationSlot, ReplicationSlotState, SqlRunner } from './replication-slot';
import { classifyStreamFailure, StreamFailure } from './stream-failure';
import { LogicalRoundResult, StreamSession, StreamSessionDeps } from './stream-session';

export type { LogicalRoundResult } from './stream-session';

/** A stand-by asks for the slot this often (± 20%): it takes over within about this after the reader dies. */
const STANDBY_RETRY_MS = 1_000;
/** An instance that cannot read for a reason an operator must fix looks again this often. */
const PROBLEM_RETRY_MS = 5_000;
/** PostgreSQL's default `wal_sender_timeout`, for a server whose setting is off. */
const DEFAULT_WAL_SENDER_TIMEOUT_MS = 60_000;
/** The same problem is logged again after this long. */
const PROBLEM_LOG_INTERVAL_MS = 60_000;

/** What the logical relay is doing. */
export type LogicalRelayState =
  /** Polling mode, or the relay is disabled in this process. */
  | 'off'
  | 'starting'
  /** Reading the slot. */
  | 'reading'
  /** Another instance reads the slot; this one takes over when it stops. */
  | 'standby'
  /** Cannot read: see `problem`. */
  | 'failing';

/** The logical relay's state, without I/O (health). */
export interface LogicalRelayStatus {
  readonly state: LogicalRelayState;
  readonly slot: string;
  /** While `failing`: what is wrong, in a fixed phrase (the details are in the log). */
  readonly problem?: string;
  /** While reading: seconds since the oldest commit read and not yet confirmed by the broker (0: none). */
  readonly lagSeconds?: number;
  /** While reading: messages read and not yet confirmed by the broker (or parked). */
  readonly unconfirmed?: number;
  /**
   * While reading: what the relay holds in memory (transactions read and not yet confirmed to PostgreSQL, with
   * their messages, done or not); reading pauses at `relay.batchSize` × 10.
   */
  readonly retained?: number;
}

/**
 * `relay.mode: 'logical'`: publishes the outbox's messages from PostgreSQL's log. It reads the slot through a
 * replication connection (pgoutput, messages only), publishes each committed transaction's messages in commit
 * order, keeping each key's order, and confirms a position to PostgreSQL only once the broker confirmed every
 * message before it, so a crash re-reads what was not confirmed (duplicates the inbox absorbs) and loses
 * nothing. A message the broker keeps refusing is parked in the outbox table for the polling relay (with every
 * later message of its key), so the slot moves on. One instance reads; the others stand by and take over.
 */
@Injectable()
export class LogicalRelay
  implements RelaySlotFigures, OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger: Logger;
  private readonly sql: SqlRunner;
  private readonly parking: ParkedMessages;
  private state: LogicalRelayState = 'off';
  private problem?: string;
  private lastProblemLog?: { text: string; at: number };
  private loop?: Promise<void>;
  private stopping = false;
  private session?: StreamSession;
  private sleeping?: { cancel: CancelTimer; resolve: () => void };
  /** Consecutive failures to connect: the reconnect backoff. */
  private failures = 0;
  private readonly roundListeners = new Set<(result: LogicalRoundResult) => void>();

  /** @internal Created by Nest. */
  constructor(
    @Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    @Inject(MESSAGING_LOGICAL_NAMES) private readonly names: LogicalNames,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
    private readonly wakeup: RelayWakeup,
    private readonly metrics: MessagingMetrics,
    private readonly tracing: MessageTracing,
    /** A tenant's relay (`MessagingTenants`): its slot, its database; named in the logs. */
    @Optional() @Inject(MESSAGING_TENANT_RELAY) private readonly tenant?: { readonly tenant: string },
  ) {
    this.logger = new Logger(tenant ? `${LogicalRelay.name}[${tenant.tenant}]` : LogicalRelay.name);
    this.sql = <R extends object>(text: string, params?: unknown[]) => dataSource.query<R[]>(text, params);
    this.parking = new ParkedMessages(this.sql, postgresTables(dataSource).outbox);
  }

  /** Logical mode: refuses to start on a server, or with a slot, the mode cannot work with. */
  async onModuleInit(): Promise<void> {
    if (!this.reads) return;
    const type = String(this.dataSource.options.type);
    if (type !== 'postgres') {
      throw new InvalidMessagingOptionsError([
        {
          path: 'relay.mode',
          message:
            `'logical' reads PostgreSQL's log; this DataSource is '${type}'. MySQL and MariaDB keep the ` +
            "polling relay: leave relay.mode unset (or 'poll').",
        },
      ]);
    }
    await checkLogicalRelayServer(this.sql, this.names, this.options.relay.enabled);
  }

  onApplicationBootstrap(): void {
    if (!this.reads || !this.options.relay.enabled) return;
    this.state = 'starting';
    this.loop = this.run();
  }

  /** Stops reading, lets the batches on the wire finish, confirms what they confirmed, and closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.sleeping?.cancel();
    this.sleeping?.resolve();
    await this.session?.finish(true);
    await this.loop;
    this.state = 'off';
  }

  /**
   * Logical mode, and a slot of this relay's: with tenants on, each tenant's relay reads its own, and the
   * service's own database has none (no tenant's write goes there).
   */
  private get reads(): boolean {
    return this.options.relay.mode === 'logical' && (!this.options.tenants || this.tenant !== undefined);
  }

  /** The state right now, without I/O. */
  status(): LogicalRelayStatus {
    return {
      state: this.state,
      slot: this.names.slot,
      ...(this.problem ? { problem: this.problem } : {}),
      ...(this.state === 'reading' && this.session ? this.session.lag() : {}),
    };
  }

  /** The slot as PostgreSQL describes it now (health, metrics); undefined when it does not exist. */
  slotState(): Promise<ReplicationSlotState | undefined> {
    return readReplicationSlot(this.sql, this.names);
  }

  /** Observes every round (tests, benchmarks). Returns a function that stops observing. */
  onRound(listener: (result: LogicalRoundResult) => void): () => void {
    this.roundListeners.add(listener);
    return () => this.roundListeners.delete(listener);
  }

  /** Reads the slot until shutdown: reconnects after a failure, stands by while another instance reads. */
  private async run(): Promise<void> {
    while (!this.stopping) {
      let delay = 0;
      try {
        await this.read();
        this.failures = 0;
      } catch (error) {
        delay = await this.failed(error);
      }
      if (!this.stopping && delay > 0) await this.sleep(delay);
    }
  }

  /** One replication connection, from the slot's confirmed position until the stream ends. */
  private async read(): Promise<void> {
    const slot = await readReplicationSlot(this.sql, this.names);
    if (!slot) throw new ReplicationSlotMissingError(this.names.slot);
    if (slot.walStatus === 'lost') {
      const confirmed = slot.confirmedLsn === undefined ? undefined : formatLsn(slot.confirmedLsn);
      throw new ReplicationSlotInvalidatedError(this.names.slot, confirmed);
    }
    const start = slot.confirmedLsn ?? 0n;
    // The session exists before the stream starts: frames may follow the start at once, in the same read.
    const session = new StreamSession(this.sessionDeps(), start, await this.parking.pendingKeys());
    const connection = await ReplicationConnection.start(
      this.connectionConfig(),
      this.names,
      (frame) => session.onFrame(frame),
      { clock: this.clock, inactivityTimeoutMs: await this.inactivityTimeoutMs() },
    );
    if (this.stopping) {
      await connection.close();
      return;
    }
    // This session holds the slot now: its confirmed position is where the server streams from (another
    // reader may have confirmed more between the read above and the start), and the session never goes below.
    const held = await readReplicationSlot(this.sql, this.names).catch(() => undefined);
    if (held?.confirmedLsn !== undefined) session.startAt(held.confirmedLsn);
    if (this.state === 'standby') this.logger.log(`Took over the replication slot '${this.names.slot}'.`);
    else this.logger.log(`Reading the replication slot '${this.names.slot}' from ${formatLsn(start)}.`);
    this.session = session;
    this.state = 'reading';
    this.problem = undefined;
    this.lastProblemLog = undefined;
    this.failures = 0;
    session.attach(connection);
    const error = await connection.ended;
    await session.finish(false);
    this.session = undefined;
    if (!this.stopping) throw error ?? new Error('the replication stream ended');
  }

  private sessionDeps(): StreamSessionDeps {
    return {
      transport: this.transport,
      tracing: this.tracing,
      metrics: this.metrics,
      clock: this.clock,
      relay: this.options.relay,
      names: this.names,
      parking: this.parking,
      wakePollingRelay: () => this.wakeup.fire(),
      logger: this.logger,
      report: (round: LogicalRoundResult) => this.roundListeners.forEach((listener) => listener(round)),
    };
  }

  /** Classifies why reading stopped (or did not start), logs it, and returns how long to wait. */
  private async failed(error: unknown): Promise<number> {
    const failure = await classifyStreamFailure(error, async () => {
      const slot = await readReplicationSlot(this.sql, this.names);
      return slot?.walStatus === 'lost';
    });
    if (failure.kind === 'standby') {
      if (this.state !== 'standby') {
        this.logger.log(
          `Standing by: another instance reads the replication slot '${this.names.slot}'; this one takes ` +
            'over when it stops.',
        );
      }
      this.state = 'standby';
      this.problem = undefined;
      return Math.round(STANDBY_RETRY_MS * (0.8 + this.clock.random() * 0.4));
    }
    this.state = 'failing';
    this.problem = problemOf(failure);
    if (failure.kind === 'connection') {
      this.failures += 1;
      const delay = computeRetryDelay(RECONNECT_BACKOFF, this.failures, () => this.clock.random());
      this.logProblem(
        `Reading the replication slot '${this.names.slot}' failed (${describe(error)}); retrying in ${delay} ms.`,
        'warn',
      );
      return delay;
    }
    this.logProblem(describe(error), 'error');
    return PROBLEM_RETRY_MS;
  }

  /** Logs a problem the first time, and again every minute while it lasts. */
  private logProblem(text: string, level: 'warn' | 'error'): void {
    const now = this.clock.now();
    const last = this.lastProblemLog;
    if (last && last.text === text && now - last.at < PROBLEM_LOG_INTERVAL_MS) return;
    this.lastProblemLog = { text, at: now };
    if (level === 'error') this.logger.error(text);
    else this.logger.warn(text);
  }

  private sleep(delayMs: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = this.clock.setTimeout(() => {
        this.sleeping = undefined;
        resolve();
      }, delayMs);
      this.sleeping = { cancel, resolve };
    });
  }

  /**
   * Two of the server's `wal_sender_timeout`s (60 s when it is off or cannot be read): after one, the server
   * ends a silent walsender; after two, the relay takes a silent link for dead.
   */
  private async inactivityTimeoutMs(): Promise<number> {
    const rows = await this.sql<{ ms: string }>(
      `select setting as ms from pg_settings where name = 'wal_sender_timeout'`,
    ).catch(() => []);
    const ms = Number(rows[0]?.ms);
    return 2 * (Number.isFinite(ms) && ms > 0 ? ms : DEFAULT_WAL_SENDER_TIMEOUT_MS);
  }

  /** The DataSource's connection settings (pg's pool options), for a connection of the relay's own. */
  private connectionConfig(): ClientConfig {
    const config = typeormPostgresConnectionConfig(this.dataSource);
    return {
      ...config,
      application_name: `${this.options.serviceName} logical relay${this.tenant ? ` [${this.tenant.tenant}]` : ''}`,
      connectionTimeoutMillis: config.connectionTimeoutMillis || 10_000,
      keepAlive: true,
    };
  }
}

function problemOf(failure: Exclude<StreamFailure, { kind: 'standby' }>): string {
  if (failure.kind === 'slot') {
    return failure.problem === 'missing'
      ? 'the replication slot does not exist'
      : 'the replication slot was invalidated';
  }
  return failure.kind === 'server'
    ? 'the server or role cannot serve the replication connection'
    : 'cannot connect to PostgreSQL for replication';
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
