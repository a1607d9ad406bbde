import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { destinationNames } from '../topology/destination-names';
import { DeadLetterCopyPolicy, failureHeaders } from '../failure/failure-copy';
import { publishUntilConfirmed } from '../failure/publish-until-confirmed';
import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { MessageTransport } from '../transports/message-transport.interface';
import { Delivery, DeliveryControl, Settlement } from '../transports/subscription.interface';
import { failureLogLine } from './delivery-description';
import { ACK, Failure, LEAVE, SettleDecision, settleDecision } from './settle-decision';

/** A delivery that failed, and what the pipeline knows about it. */
export interface FailedDelivery {
  readonly group: string;
  readonly delivery: Delivery;
  /** The transport's control, stopping also when the pipeline stops. */
  readonly control: DeliveryControl;
  readonly failure: Failure;
  /** The 1-based number of the delivery that failed. */
  readonly attempt: number;
}

/**
 * The failure path, after the decision: log and count the failure, build the dead-letter or retry copy
 * with its failure headers, publish it until the broker confirms, and only then answer the settlement that
 * acks the source (publish → confirm → settle).
 */
@Injectable()
export class FailureSettler {
  private readonly logger = new Logger('MessagingConsumer');

  constructor(
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    private readonly metrics: MessagingMetrics,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
  ) {}

  async settle(failed: FailedDelivery, decision: SettleDecision): Promise<Settlement> {
    const { group, delivery, control, failure, attempt } = failed;
    const what =
      decision.kind === 'DEAD_LETTER'
        ? `dead-lettered (${decision.reason}) to ${destinationNames.deadLetter(delivery.wire.destination, group)}`
        : decision.kind.toLowerCase().replace(/_/g, ' ');
    this.logFailure(failed, what);
    const headers = failureHeaders(
      {
        category: failure.category,
        code: failure.code,
        originDestination: delivery.wire.destination,
        attempt,
        now: new Date(this.clock.now()),
      },
      delivery.wire.headers,
    );
    const labels = { group, destination: delivery.wire.destination };
    this.metrics.failedAttempts.inc({ ...labels, category: failure.category });
    const settlement = await settleDecision(
      {
        group,
        delivery,
        failureHeaders: headers,
        deadLetterPolicy: () => this.deadLetterPolicy(),
        publishConfirmed: (copy) => this.publishConfirmed(copy, control),
      },
      decision,
    );
    if (settlement.kind === 'LEAVE') return settlement;
    if (decision.kind === 'DEAD_LETTER')
      this.metrics.deadLettered.inc({ ...labels, category: failure.category });
    else if (decision.kind !== 'REJECT') {
      this.metrics.retried.inc({
        ...labels,
        mode: decision.kind === 'PAUSE_AND_RETRY' ? 'pause' : 'retry_destination',
      });
    }
    return settlement;
  }

  private deadLetterPolicy(): DeadLetterCopyPolicy {
    const { keySecret, carryHeaders } = this.options.deadLetter;
    // The consumer explorer refuses to start an application with consumers and no key secret.
    if (!keySecret) throw new Error('deadLetter.keySecret is missing');
    return { keySecret, carryHeaders };
  }

  /**
   * Sends a message that came back from a retry destination before its due time on to the retry
   * destination of `tierMs` (the rest of its wait), unchanged: publish, confirm, then ack the source.
   */
  async forward(
    group: string,
    delivery: Delivery,
    control: DeliveryControl,
    tierMs: number,
  ): Promise<Settlement> {
    const { wire } = delivery;
    const copy = { ...wire, destination: destinationNames.retry(wire.destination, group, tierMs) };
    this.logger.debug(
      `Message ${wire.headers[MessageHeaders.ID] ?? '(no id)'} not due yet: on to ${copy.destination}.`,
    );
    return (await this.publishConfirmed(copy, control)) ? ACK : LEAVE;
  }

  /** A log line about the failure and what becomes of the message: ids and codes, never the payload. */
  logFailure(failed: FailedDelivery, outcome: string): void {
    const { group, delivery, failure, attempt } = failed;
    this.logger.warn(failureLogLine(group, delivery, failure, attempt, outcome));
  }

  private publishConfirmed(copy: WireMessage, control: DeliveryControl): Promise<boolean> {
    return publishUntilConfirmed((copies) => this.transport.publishCopies(copies), copy, {
      clock: this.clock,
      isStopping: () => control.isStopping(),
      keepAlive: () => control.keepAlive(),
      log: this.logger,
    });
  }
}
