import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { withoutFailureHeaders } from '../dead-letter/failure-copy';
import { decodeEnvelope } from '../envelope/envelope-codec';
import { FailureCategory } from '../envelope/failure-category';
import { MessageEnvelope } from '../envelope/message-envelope';
import { isRedriveForAnotherGroup } from '../dead-letter/redrive-target-group';
import { MessageHeaders } from '../envelope/message-headers';
import { InboxDelivery, InboxService } from '../inbox/inbox.service';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { ErrorClassifier } from '../retry/error-classifier';
import { RetryDecision } from '../retry/retry-decision';
import { tierAtMost } from '../retry/backoff';
import { decideRetry, decideUnprocessable } from '../retry/retry-decision-engine';
import { ResolvedRetryPolicy } from '../retry/retry-policy.interface';
import { MessageTransport } from '../transports/message-transport.interface';
import { Delivery, DeliveryControl, Settlement } from '../transports/subscription.interface';
import { describeMessage, errorLine, messageContext } from './delivery-description';
import { FailedDelivery, FailureSettler } from './failure-settler';
import { HandlerDefinition, HandlerRegistry } from './handler-registry';
import { groupRetryTiers } from './retry-tiers';
import { ACK, Failure, LEAVE } from './settle-decision';

/** The longest an inline wait goes without a keep-alive (Kafka heartbeats). */
const KEEP_ALIVE_EVERY_MS = 1_000;

/**
 * What happens to every delivery, on every transport: decode the envelope, find the group's handler,
 * validate the payload, run handler and inbox record in one transaction, and say how to settle. A failure at
 * any step is classified, the retry engine decides, and the `FailureSettler` publishes any dead-letter or
 * retry copy (publish → confirm → settle); the transport only applies the settlement. Attempts of a message
 * retried in place are counted in the database, so `maxAttempts` holds across restarts. Bad messages never
 * stop a consumer.
 */
@Injectable()
export class DeliveryPipeline {
  private readonly logger = new Logger('MessagingConsumer');
  private readonly classifier: ErrorClassifier;
  private stopping = false;

  constructor(
    private readonly registry: HandlerRegistry,
    private readonly inbox: InboxService,
    private readonly failures: FailureSettler,
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

  async handle(group: string, received: Delivery, transportControl: DeliveryControl): Promise<Settlement> {
    if (isRedriveForAnotherGroup(received.wire.headers, group)) {
      // A redrive brings a message back to the one group that failed it; the others had it already.
      this.metrics.consumed.inc({ group, destination: received.wire.destination, outcome: 'skipped' });
      return ACK;
    }
    const delivery = trustedDelivery(received);
    const control: DeliveryControl = {
      keepAlive: () => transportControl.keepAlive(),
      isStopping: () => this.stopping || transportControl.isStopping(),
    };
    const notDueFor = this.notDueFor(delivery);
    if (notDueFor > 0) {
      const tier = tierAtMost(
        notDueFor,
        groupRetryTiers(this.registry, this.options, group, delivery.wire.destination),
      );
      if (tier !== undefined) return this.failures.forward(group, delivery, control, tier);
      if (!(await this.wait(notDueFor, control))) return LEAVE;
    }
    const decoded = decodeEnvelope(delivery.wire);
    const destination = delivery.wire.destination;
    const defaultPolicy = this.options.retryDefaults.get(destination);
    const failed = (failure: Failure): FailedDelivery => ({
      group,
      delivery,
      control,
      failure,
      attempt: firstAttempt(delivery),
    });
    if (!decoded.ok) return this.failures.settle(failed(decoded.failure), decideUnprocessable(defaultPolicy));

    const envelope = decoded.envelope;
    const handler = this.registry.find(group, destination, envelope.type);
    if (!handler) {
      const failure = {
        category: FailureCategory.VALIDATION,
        code: 'UNKNOWN_TYPE',
        messageId: envelope.messageId,
      };
      return this.failures.settle(failed(failure), decideUnprocessable(defaultPolicy));
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
      return this.failures.settle(failed(failure), decideUnprocessable(handler.policy));
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
    const inboxDelivery: InboxDelivery = {
      group,
      envelope,
      body: delivery.wire.body,
      redriveId: delivery.wire.headers[MessageHeaders.REDRIVE_ID] ?? '',
    };
    let attempt = firstAttempt(delivery);
    let failedInPlace = false;
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
          this.inbox.runOnce(inboxDelivery, async (scope, failedBefore) => {
            // Deliveries that failed in place before this one, in this process or another.
            attempt = Math.max(attempt, failedBefore + 1);
            failedInPlace ||= failedBefore > 0;
            const lagSeconds = Math.max(0, this.clock.now() - envelope.occurredAt.getTime()) / 1000;
            this.metrics.endToEnd.observe(labels, lagSeconds);
            await handler.invoke(payload, messageContext(group, delivery, envelope, attempt, scope.manager));
          }),
        );
        if (outcome === 'CONFLICT') return this.conflict({ group, delivery, control, attempt }, envelope);
        if (outcome === 'DUPLICATE') {
          this.logger.debug(`${describeMessage(envelope, group, attempt)}: duplicate, skipped.`);
        }
        this.metrics.consumed.inc({ ...labels, outcome: outcome === 'DUPLICATE' ? 'duplicate' : 'handled' });
        return ACK;
      } catch (error) {
        const { category, code } = this.classifier.classify(error);
        const failure: Failure = { category, code, messageId: envelope.messageId, detail: errorLine(error) };
        const failed: FailedDelivery = { group, delivery, control, failure, attempt };
        const decision = this.decide(failure, attempt, handler.policy);
        if (decision.kind === 'PAUSE_AND_RETRY' || decision.kind === 'RETRY_INLINE') {
          await this.rememberFailedAttempt(inboxDelivery, attempt);
          failedInPlace = true;
        }
        if (decision.kind !== 'RETRY_INLINE') {
          const settlement = await this.failures.settle(failed, decision);
          if (failedInPlace && settlement.kind === 'ACK') await this.forgetFailedAttempts(inboxDelivery);
          return settlement;
        }
        this.metrics.failedAttempts.inc({ ...labels, category });
        this.metrics.retried.inc({ ...labels, mode: 'inline' });
        this.failures.logFailure(failed, `retrying inline in ${decision.delayMs} ms`);
        if (!(await this.wait(decision.delayMs, control))) return LEAVE;
        attempt = decision.nextAttempt;
      }
    }
  }

  /**
   * A different message under the id of one handled before: not handled (the first is kept), and not
   * dropped either: dead-lettered as ID_CONFLICT, whatever the policy, for someone to look at.
   */
  private conflict(failed: Omit<FailedDelivery, 'failure'>, envelope: MessageEnvelope): Promise<Settlement> {
    const failure: Failure = {
      category: FailureCategory.VALIDATION,
      code: 'ID_CONFLICT',
      messageId: envelope.messageId,
      detail: 'a different payload than the message handled first under this id',
    };
    return this.failures.settle({ ...failed, failure }, { kind: 'DEAD_LETTER', reason: 'NON_RETRYABLE' });
  }

  /**
   * How long a message back from a retry destination is still not due (RabbitMQ: a TTL tier shorter than
   * its delay; the rest is waited in a smaller tier, or here). Never as long as the tier it came from, so
   * every hop is shorter than the last and a due time far in the future cannot hold it.
   */
  private notDueFor(delivery: Delivery): number {
    const tierMs = delivery.origin.retryTierMs;
    const dueAt = Date.parse(delivery.wire.headers[MessageHeaders.RETRY_DUE_AT] ?? '');
    if (tierMs === undefined || !(dueAt > this.clock.now())) return 0;
    return Math.min(dueAt - this.clock.now(), tierMs - 1);
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

  /** Counts the failed attempt in the database (if that fails, the next delivery may count from less). */
  private async rememberFailedAttempt(delivery: InboxDelivery, attempt: number): Promise<void> {
    try {
      await this.inbox.recordFailedAttempt(delivery, attempt);
    } catch (error) {
      this.logger.warn(
        `Could not record failed attempt ${attempt} of message ${delivery.envelope.messageId}: ${errorLine(error)}`,
      );
    }
  }

  /** The message left the destination: its count is not needed any more (the retention purges leftovers). */
  private async forgetFailedAttempts(delivery: InboxDelivery): Promise<void> {
    await this.inbox.forgetFailedAttempts(delivery).catch(() => undefined);
  }

  /** Sleeps for an inline retry, keeping the consumer alive; false when the consumer stops meanwhile. */
  private async wait(delayMs: number, control: DeliveryControl): Promise<boolean> {
    const until = this.clock.now() + delayMs;
    while (this.clock.now() < until) {
      if (control.isStopping()) return false;
      await this.clock.sleep(Math.min(KEEP_ALIVE_EVERY_MS, until - this.clock.now()));
      await control.keepAlive();
    }
    return !control.isStopping();
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

/** The number of this delivery as far as the message says: one more than `msg.retry-attempt`, or 1. */
function firstAttempt(delivery: Delivery): number {
  const failed = Number.parseInt(delivery.wire.headers[MessageHeaders.RETRY_ATTEMPT] ?? '0', 10);
  return (Number.isFinite(failed) && failed > 0 ? failed : 0) + 1;
}
