import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { ConsumersStillJoiningError } from '../errors/consumers-still-joining.error';
import { MESSAGING_CLOCK, MESSAGING_TRANSPORT } from '../messaging.constants';
import { MessageTransport } from '../transports/message-transport.interface';
import { RunningConsumers } from './observed-sources';

/** How often `consumersJoined()` looks (a look costs no I/O). */
const JOIN_POLL_MS = 20;

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
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
  ) {}

  /** The state right now. */
  snapshot(): MessagingStatusSnapshot {
    return {
      transport: { kind: this.transport.kind, ...this.transport.health() },
      consumers: this.consumers.runningGroups(),
      joining: this.consumers.joiningGroups(),
    };
  }

  /**
   * Resolves once every consumer group started receives deliveries (`joining` empty): the application starts
   * without waiting for its groups to join, so a test or a script that publishes at once and expects the
   * group to take part from the first message waits here first. Rejects with `ConsumersStillJoiningError`
   * after `timeoutMs` (default 60 s).
   */
  async consumersJoined(timeoutMs = 60_000): Promise<void> {
    const deadline = this.clock.now() + timeoutMs;
    while (this.consumers.joiningGroups().length > 0) {
      if (this.clock.now() >= deadline) {
        throw new ConsumersStillJoiningError(this.consumers.joiningGroups(), timeoutMs);
      }
      await this.clock.sleep(Math.min(JOIN_POLL_MS, Math.max(1, deadline - this.clock.now())));
    }
  }
}
