import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MESSAGING_DATA_SOURCE, MESSAGING_TRANSPORT } from '../messaging.constants';
import { OutboxStore } from '../outbox/outbox-store';
import { MessageTransport } from '../transports/message-transport.interface';

/**
 * One health check's result, keyed by the check's name: the shape `@nestjs/terminus` expects from an
 * indicator (its `HealthIndicatorResult`), so the results go straight into `HealthCheckService.check()`.
 */
export type MessagingHealthResult<Key extends string = string> = Record<
  Key,
  { status: 'up' | 'down'; [detail: string]: unknown }
>;

/**
 * Health checks of the library's dependencies, in the shape `@nestjs/terminus` takes (the library itself
 * does not need terminus):
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() {
 *   return this.health.check([
 *     () => this.messaging.database(), () => this.messaging.broker(), () => this.messaging.outboxBacklog(),
 *   ]);
 * }
 * ```
 *
 * A failed check says what is down in a fixed phrase; the error itself (hosts, ports, driver messages) goes to
 * the log, never to whoever can reach the health endpoint.
 */
@Injectable()
export class MessagingHealthIndicator {
  private readonly logger = new Logger(MessagingHealthIndicator.name);

  /** @internal Created by Nest; inject it. */
  constructor(
    private readonly store: OutboxStore,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource,
  ) {}

  /** The database the outbox and inbox live in answers a query. */
  async database<Key extends string = 'database'>(
    key: Key = 'database' as Key,
  ): Promise<MessagingHealthResult<Key>> {
    try {
      await this.dataSource.query('select 1');
      return result(key, 'up');
    } catch (error) {
      this.logger.warn(`Health: the database did not answer: ${(error as Error).message}`);
      return result(key, 'down', { error: 'the database did not answer' });
    }
  }

  /** The broker answers (Kafka: a metadata request; RabbitMQ: the connection). */
  async broker<Key extends string = 'broker'>(
    key: Key = 'broker' as Key,
  ): Promise<MessagingHealthResult<Key>> {
    const health = await this.transport.checkHealth();
    if (health.connected) return result(key, 'up', { transport: this.transport.kind });
    this.logger.warn(`Health: the broker did not answer: ${health.lastError ?? 'not connected'}`);
    return result(key, 'down', { transport: this.transport.kind, error: 'the broker did not answer' });
  }

  /**
   * The outbox is keeping up: down when its oldest pending row is older than `maxAgeMs` (default 60 s), the
   * sign of a relay that cannot publish (broker down, unroutable messages) or cannot keep pace.
   */
  async outboxBacklog<Key extends string = 'outbox'>(
    key: Key = 'outbox' as Key,
    maxAgeMs = 60_000,
  ): Promise<MessagingHealthResult<Key>> {
    try {
      const backlog = await this.store.backlog();
      const pending = backlog.reduce((sum, b) => sum + b.pending, 0);
      const oldestPendingAgeMs = backlog.reduce((max, b) => Math.max(max, b.oldestAgeMs), 0);
      const details = { pending, oldestPendingAgeMs, maxAgeMs };
      return oldestPendingAgeMs > maxAgeMs
        ? result(key, 'down', { ...details, degraded: true })
        : result(key, 'up', details);
    } catch (error) {
      this.logger.warn(`Health: reading the outbox backlog failed: ${(error as Error).message}`);
      return result(key, 'down', { error: 'reading the outbox backlog failed' });
    }
  }
}

function result<Key extends string>(
  key: Key,
  status: 'up' | 'down',
  details: Record<string, unknown> = {},
): MessagingHealthResult<Key> {
  return { [key]: { ...details, status } } as MessagingHealthResult<Key>;
}
