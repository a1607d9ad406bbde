import { Controller, Get, Inject } from '@nestjs/common';
import { HealthCheck, HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import {
  ConsumerOrchestrator,
  MESSAGING_TRANSPORT,
  MessageTransport,
  MessagingHealthIndicator,
} from '@app/messaging';

/** The outbox is degraded when its oldest unpublished row is older than this. */
const OUTBOX_MAX_AGE_MS = 60_000;

/** What `GET /health/live` answers (no error text: that goes to the log). */
export interface LiveReport {
  readonly status: 'ok';
  readonly transport: { readonly kind: string; readonly connected: boolean };
  /** Consumer groups whose subscription is running. */
  readonly consumers: string[];
}

/**
 * `GET /health`: readiness through `@nestjs/terminus` (database, broker, outbox backlog; 503 when one is
 * down). `GET /health/live`: the process answers, with what a script needs before it drives the service.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly messaging: MessagingHealthIndicator,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    private readonly consumers: ConsumerOrchestrator,
  ) {}

  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check([
      () => this.messaging.database(),
      () => this.messaging.broker(),
      () => this.messaging.outboxBacklog('outbox', OUTBOX_MAX_AGE_MS),
    ]);
  }

  @Get('live')
  live(): LiveReport {
    return {
      status: 'ok',
      transport: { kind: this.transport.kind, connected: this.transport.health().connected },
      consumers: this.consumers.runningGroups(),
    };
  }
}
