import { Inject, Injectable } from '@nestjs/common';
import { MESSAGING_TRANSPORT } from '../messaging.constants';
import { MessageTransport } from '../transports/message-transport.interface';
import { RunningConsumers } from './observed-sources';

/** What `MessagingStatus.snapshot()` reports. */
export interface MessagingStatusSnapshot {
  /** The broker connection as the transport last saw it (no I/O). */
  readonly transport: {
    readonly kind: 'kafka' | 'rabbitmq';
    readonly connected: boolean;
    /** The last connection or publish error, while not connected. */
    readonly lastError?: string;
  };
  /** Consumer groups whose subscription is running (joined, receiving deliveries). */
  readonly consumers: string[];
  /**
   * Consumer groups started that do not receive deliveries yet: joining their group (on Kafka, a restart
   * after a kill waits for the killed member's session to expire; the application serves meanwhile) or
   * subscribing again after a failure.
   */
  readonly joining: string[];
}

/**
 * The library's state without I/O, for liveness endpoints and startup scripts: the broker connection as
 * last seen and the consumer groups running. (Readiness checks that ask the broker and the database are on
 * `MessagingHealthIndicator`.)
 */
@Injectable()
export class MessagingStatus {
  /** @internal Created by Nest; inject it. */
  constructor(
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    private readonly consumers: RunningConsumers,
  ) {}

  /** The state right now. */
  snapshot(): MessagingStatusSnapshot {
    return {
      transport: { kind: this.transport.kind, ...this.transport.health() },
      consumers: this.consumers.runningGroups(),
      joining: this.consumers.joiningGroups(),
    };
  }
}
