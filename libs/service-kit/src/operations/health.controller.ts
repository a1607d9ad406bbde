import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { MessagingHealthIndicator, MessagingStatus, MessagingStatusSnapshot } from 'nest-reliable-messaging';

/** The outbox is degraded when its oldest unpublished row is older than this. */
const OUTBOX_MAX_AGE_MS = 60_000;

/** What `GET /health/live` answers: the process is up, with the library's state (no I/O, no error text). */
export interface LiveReport extends MessagingStatusSnapshot {
  readonly status: 'ok';
}

/**
 * `GET /health`: readiness through `@nestjs/terminus` (database, broker, consumer groups joined, outbox backlog, and with
 * `RELAY_MODE=logical` the relay's slot; 503 when one is down; held messages as a warning, never down). `GET /health/live`: the process answers, with what a script needs before it drives the service.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly messaging: MessagingHealthIndicator,
    private readonly status: MessagingStatus,
  ) {}

  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.messaging.database(),
      () => this.messaging.broker(),
      () => this.messaging.consumers(), // down while a consumer group is still joining (the app serves)
      () => this.messaging.outboxBacklog('outbox', OUTBOX_MAX_AGE_MS),
      () => this.messaging.relay('relay'),
      () => this.messaging.heldMessages(), // never down: a warning while messages are held (a deploy)
    ]);
  }

  @Get('live')
  live(): LiveReport {
    // The transport's last error stays in the log: no raw error text to whoever can reach the port.
    const { transport, consumers, joining } = this.status.snapshot();
    const connection = { kind: transport.kind, connected: transport.connected };
    return { status: 'ok', transport: connection, consumers, joining };
  }
}
