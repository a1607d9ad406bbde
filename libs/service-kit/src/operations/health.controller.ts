import { Controller, Get, Inject } from '@nestjs/common';
import { ConsumerOrchestrator, MESSAGING_TRANSPORT, MessageTransport, TransportHealth } from '@app/messaging';

/** What `GET /health` answers. */
export interface HealthReport {
  readonly status: 'ok';
  readonly transport: { readonly kind: string } & TransportHealth;
  /** Consumer groups whose subscription is running. */
  readonly consumers: string[];
}

/** Liveness, plus what a script needs to know before it drives the service (broker, running consumers). */
@Controller('health')
export class HealthController {
  constructor(
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    private readonly consumers: ConsumerOrchestrator,
  ) {}

  @Get()
  check(): HealthReport {
    return {
      status: 'ok',
      transport: { kind: this.transport.kind, ...this.transport.health() },
      consumers: this.consumers.runningGroups(),
    };
  }
}
