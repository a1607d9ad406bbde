import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { failureHeaders, withoutFailureHeaders } from '../dead-letter/failure-copy';
import { publishUntilConfirmed } from '../dead-letter/publish-until-confirmed';
import { decodeEnvelope } from '../envelope/envelope-codec';
import { FailureCategory } from '../envelope/failure-category';
import { MessageEnvelope } from '../envelope/message-envelope';
import { WireMessage } from '../envelope/wire-message';
import { InboxService } from '../inbox/inbox.service';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { ErrorClassifier } from '../retry/error-classifier';
import { RetryDecision } from '../retry/retry-decision';
import { decideRetry, decideUnprocessable } from '../retry/retry-decision-engine';
import { ResolvedRetryPolicy } from '../retry/retry-policy.interface';
import { MessageTransport } from '../transports/message-transport.interface';
import { Delivery, DeliveryControl, Settlement } from '../transports/subscription.interface';
import { describeMessage, errorLine, failureLogLine, messageContext } from './delivery-description';
import { HandlerDefinition, HandlerRegistry } from './handler-registry';
import { ACK, Failure, LEAVE, SettleDecision, settleDecision } from './settle-decision';

/** The longest an inline wait goes without a keep-alive (Kafka heartbeats). */
const KEEP_ALIVE_EVERY_MS = 1_000;

/**
 * What happens to every delivery, on every transport: decode the envelope, find the group's handler,
 * validate the payload, run handler and inbox record in one transaction, and say how to settle. A failure at
 * any step is classified, the retry engine decides, and the pipeline builds and publishes the dead-letter or
 * retry copy itself (publish → confirm → settle); the transport only applies the settlement. Bad messages
 * never stop a consumer.
 */
@Injectable()
export class DeliveryPipeline {
  private readonly logger = new Logger('MessagingConsumer');
  private readonly classifier: ErrorClassifier;
  private stopping = false;

  constructor(
    private readonly registry: HandlerRegistry,
    private readonly inbox: InboxService,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly metrics: MessagingMetrics,
    private readonly tracing: MessageTracing,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
  ) {
    this.classifier = new ErrorClassifier([...options.classification]);
  }

  /** From now on, deliveries waiting for an inline retry or a copy's confirm are left unsettled. */
  stop(): void {
    this.stopping = true;
  }

  resume(): void {
    this.stopping = false;
  }

  async handle(group: string, received: Delivery, control: DeliveryControl): Promise<Settlement> {
    const delivery = trustedDelivery(received);
    const decoded = decodeEnvelope(delivery.wire);
    const destination = delivery.wire.destination;
    const defaultPolicy = this.options.retryDefaults.get(destination);
    if (!decoded.ok) return this.fail(group, delivery, control, decoded.failure, defaultPolicy);

    const envelope = decoded.envelope;
    const handler = this.registry.find(group, destination, envelope.type);
    if (!handler) {
      const failure = {
        category: FailureCategory.VALIDATION,
        code: 'UNKNOWN_TYPE',
        messageId: envelope.messageId,
      };
      return this.fail(group, delivery, control, failure, defaultPolicy);
    }
    const parsed = handler.event.schema.safeParse(envelope.payload);
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => i.path.join('.') || '(payload)').join(', ');
      const failure = {
        category: FailureCategory.VALIDATION,
        code: 'SCHEMA_MISMATCH',
        messageId: envelope.messageId,
        detail,
      };
      return this.fail(group, delivery, control, failure, handler.policy);
    }
    return this.run(group, delivery, control, envelope, handler, parsed.data);
  }

  private async run(
    group: string,
    delivery: Delivery,
    control: DeliveryControl,
    envelope: MessageEnvelope,
    handler: HandlerDefinition,
    payload: unknown,
  ): Promise<Settlement> {
    let attempt = delivery.attempt;
    const labels = { group, destination: envelope.destination };
    for (;;) {
      try {
        const spanAttributes = {
          'messaging.consumer.group.name': group,
          'messaging.destination.partition.id': delivery.origin.partition?.toString() ?? '',
          'messaging.kafka.offset': delivery.origin.offset ?? '',
          'messaging.message.attempt': attempt,
        };
        const outcome = await this.tracing.process(this.transport.kind, delivery.wire, spanAttributes, () =>
          this.inbox.runOnce(group, envelope, delivery.wire.body, async (scope) => {
            const lagSeconds = Math.max(0, this.clock.now() - envelope.occurredAt.getTime()) / 1000;
            this.metrics.endToEnd.observe(labels, lagSeconds);
            await handler.invoke(payload, messageContext(group, delivery, envelope, attempt, scope.manager));
          }),
        );
        if (outcome === 'CONFLICT') return this.conflict(group, delivery, control, envelope, attempt);
        if (outcome === 'DUPLICATE') {
          this.logger.debug(`${describeMessage(envelope, group, attempt)}: duplicate, skipped.`);
        }
        this.metrics.consumed.inc({ ...labels, outcome: outcome === 'DUPLICATE' ? 'duplicate' : 'handled' });
        return ACK;
      } catch (error) {
        const { category, code } = this.classifier.classify(error);
        const failure: Failure = { category, code, messageId: envelope.messageId, detail: errorLine(error) };
        const decision = this.decide(failure, attempt, handler.policy);
        if (decision.kind !== 'RETRY_INLINE')
          return this.settle(group, delivery, control, failure, attempt, decision);
        this.metrics.failedAttempts.inc({ ...labels, category });
        this.metrics.retried.inc({ ...labels, mode: 'inline' });
        this.logFailure(group, delivery, failure, attempt, `retrying inline in ${decision.delayMs} ms`);
        if (!(await this.wait(decision.delayMs, control))) return LEAVE;
        attempt = decision.nextAttempt;
      }
    }
  }

  /**
   * A different message under the id of one handled before: not handled (the first is kept), and not
   * dropped either: dead-lettered as ID_CONFLICT, whatever the policy, for someone to look at.
   */
  private conflict(
    group: string,
    delivery: Delivery,
    control: DeliveryControl,
    envelope: MessageEnvelope,
    attempt: number,
  ): Promise<Settlement> {
    const failure: Failure = {
      category: FailureCategory.VALIDATION,
      code: 'ID_CONFLICT',
      messageId: envelope.messageId,
      detail: 'a different payload than the message handled first under this id',
    };
    return this.settle(group, delivery, control, failure, attempt, {
      kind: 'DEAD_LETTER',
      reason: 'NON_RETRYABLE',
    });
  }

  /** A message no handler can take fails the same way on every delivery: never retried, whatever the mode. */
  private fail(
    group: string,
    delivery: Delivery,
    control: DeliveryControl,
    failure: Failure,
    policy: ResolvedRetryPolicy | undefined,
  ): Promise<Settlement> {
    return this.settle(group, delivery, control, failure, delivery.attempt, decideUnprocessable(policy));
  }

  private decide(failure: Failure, attempt: number, policy: ResolvedRetryPolicy | undefined): RetryDecision {
    return decideRetry({
      category: failure.category,
      attempt,
      policy,
      destination: { ordered: this.transport.capabilities.orderedStream },
      capabilities: this.transport.capabilities,
      now: () => new Date(this.clock.now()),
      random: Math.random,
    });
  }

  /** Logs and counts the failure, then decide → build copy → publish → confirm → settle. */
  private async settle(
    group: string,
    delivery: Delivery,
    control: DeliveryControl,
    failure: Failure,
    attempt: number,
    decision: SettleDecision,
  ): Promise<Settlement> {
    const what =
      decision.kind === 'DEAD_LETTER'
        ? `dead-lettered (${decision.reason})`
        : decision.kind.toLowerCase().replace(/_/g, ' ');
    this.logFailure(group, delivery, failure, attempt, what);
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

  private publishConfirmed(copy: WireMessage, control: DeliveryControl): Promise<boolean> {
    return publishUntilConfirmed((copies) => this.transport.publishCopies(copies), copy, {
      clock: this.clock,
      isStopping: () => this.stopping || control.isStopping(),
      keepAlive: () => control.keepAlive(),
      log: this.logger,
    });
  }

  /** Sleeps for an inline retry, keeping the consumer alive; false when the consumer stops meanwhile. */
  private async wait(delayMs: number, control: DeliveryControl): Promise<boolean> {
    const until = this.clock.now() + delayMs;
    while (this.clock.now() < until) {
      if (this.stopping || control.isStopping()) return false;
      await this.clock.sleep(Math.min(KEEP_ALIVE_EVERY_MS, until - this.clock.now()));
      await control.keepAlive();
    }
    return !this.stopping && !control.isStopping();
  }

  private logFailure(
    group: string,
    delivery: Delivery,
    failure: Failure,
    attempt: number,
    outcome: string,
  ): void {
    this.logger.warn(failureLogLine(group, delivery, failure, attempt, outcome));
  }
}

/**
 * The delivery with the failure headers (attempt, first failure, due time) only where the library wrote
 * them: a message read from the destination itself has none, whatever its producer set.
 */
function trustedDelivery(delivery: Delivery): Delivery {
  if (delivery.origin.retryTierMs !== undefined) return delivery;
  return { ...delivery, wire: { ...delivery.wire, headers: withoutFailureHeaders(delivery.wire.headers) } };
}
