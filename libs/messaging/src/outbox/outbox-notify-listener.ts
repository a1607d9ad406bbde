import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import type { Notification, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { CancelTimer, Clock } from '../common/clock';
import { typeormPostgresPool } from '../transaction/typeorm-postgres-pool.patch';
import { MESSAGING_CLOCK, MESSAGING_DATA_SOURCE, MESSAGING_RESOLVED_OPTIONS } from '../messaging.constants';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { computeRetryDelay, RECONNECT_BACKOFF } from '../retry/backoff';
import { OutboxRelay } from './outbox-relay';
import { OutboxStore } from './outbox-store';

/**
 * With `relay.notify`, listens for NOTIFY on the outbox's channel and wakes the local relay, so that a row
 * committed by another instance is published at once too. Holds one pooled connection; reconnects after a
 * drop. Off by default: NOTIFY takes a global lock while committing transactions queue their
 * notifications, which serialises commits that write outbox rows (see docs/guide/02-guarantees.md).
 */
@Injectable()
export class OutboxNotifyListener implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxNotifyListener.name);
  private client?: PoolClient;
  private stopping = false;
  private retryTimer?: CancelTimer;
  private failures = 0;

  constructor(
    @Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly store: OutboxStore,
    private readonly relay: OutboxRelay,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    if (this.options.relay.enabled && this.options.relay.notify) void this.listen();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.retryTimer?.();
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    await client.query(`unlisten "${this.channel}"`).catch(() => undefined);
    client.release();
  }

  /** Set on PostgreSQL, the only database `relay.notify` is accepted with (checked at startup). */
  private get channel(): string {
    return this.store.notifyChannel ?? '';
  }

  private async listen(): Promise<void> {
    if (this.stopping) return;
    try {
      const client = await typeormPostgresPool(this.dataSource).connect();
      client.on('notification', (message: Notification) => {
        if (message.channel === this.channel) this.relay.wake();
      });
      client.on('error', (error: Error) => this.reconnect(client, error));
      await client.query(`listen "${this.channel}"`);
      this.client = client;
      this.failures = 0;
      this.relay.wake(); // rows may have committed while we were not listening
    } catch (error) {
      this.scheduleRetry(error as Error);
    }
  }

  private reconnect(client: PoolClient, error: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.release(error);
    this.scheduleRetry(error);
  }

  private scheduleRetry(error: Error): void {
    if (this.stopping) return;
    this.failures += 1;
    const delay = computeRetryDelay(RECONNECT_BACKOFF, this.failures, () => this.clock.random());
    this.logger.warn(`LISTEN on ${this.channel} failed (${error.message}); retrying in ${delay} ms.`);
    this.retryTimer = this.clock.setTimeout(() => void this.listen(), delay);
  }
}
