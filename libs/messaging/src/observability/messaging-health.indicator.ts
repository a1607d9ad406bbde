import { Inject, Injectable, Logger } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { MESSAGING_DATA_SOURCE, MESSAGING_TRANSPORT } from '../messaging.constants';
import { OutboxStore } from '../outbox/outbox-store';
import { MessageTransport } from '../transports/message-transport.interface';

/**
 * `@nestjs/terminus` health indicators for the library's dependencies:
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

  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly store: OutboxStore,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_DATA_SOURCE) private readonly dataSource: DataSource,
  ) {}

  /** The database the outbox and inbox live in answers a query. */
  async database(key = 'database'): Promise<HealthIndicatorResult> {
    const check = this.indicators.check(key);
    try {
      await this.dataSource.query('select 1');
      return check.up();
    } catch (error) {
      this.logger.warn(`Health: the database did not answer: ${(error as Error).message}`);
      return check.down({ error: 'the database did not answer' });
    }
  }

  /** The broker answers (Kafka: a metadata request; RabbitMQ: the connection). */
  async broker(key = 'broker'): Promise<HealthIndicatorResult> {
    const check = this.indicators.check(key);
    const health = await this.transport.checkHealth();
    if (health.connected) return check.up({ transport: this.transport.kind });
    this.logger.warn(`Health: the broker did not answer: ${health.lastError ?? 'not connected'}`);
    return check.down({ transport: this.transport.kind, error: 'the broker did not answer' });
  }

  /**
   * The outbox is keeping up: down when its oldest pending row is older than `maxAgeMs` (default 60 s), the
   * sign of a relay that cannot publish (broker down, unroutable messages) or cannot keep pace.
   */
  async outboxBacklog(key = 'outbox', maxAgeMs = 60_000): Promise<HealthIndicatorResult> {
    const check = this.indicators.check(key);
    try {
      const backlog = await this.store.backlog();
      const pending = backlog.reduce((sum, b) => sum + b.pending, 0);
      const oldestPendingAgeMs = backlog.reduce((max, b) => Math.max(max, b.oldestAgeMs), 0);
      const details = { pending, oldestPendingAgeMs, maxAgeMs };
      return oldestPendingAgeMs > maxAgeMs ? check.down({ ...details, degraded: true }) : check.up(details);
    } catch (error) {
      this.logger.warn(`Health: reading the outbox backlog failed: ${(error as Error).message}`);
      return check.down({ error: 'reading the outbox backlog failed' });
    }
  }
}
