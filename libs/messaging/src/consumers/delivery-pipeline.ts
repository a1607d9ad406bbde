import { Inject, Injectable, Logger } from '@nestjs/common';
import { decodeEnvelope } from '../envelope/envelope-codec';
import { FailureCategory } from '../envelope/failure-category';
import { MessageEnvelope } from '../envelope/message-envelope';
import { failureHeaders } from '../dead-letter/failure-copy';
import { isRedriveForAnotherGroup } from '../dead-letter/redrive-target-group';
import { InboxService } from '../inbox/inbox.service';
import { MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { ErrorClassifier } from '../retry/error-classifier';
import { RetryDecision } from '../retry/retry-decision';
import { decideRetry } from '../retry/retry-decision-engine';
import { ResolvedRetryPolicy } from '../retry/retry-policy.interface';
import { MessageTransport } from '../transports/message-transport.interface';
import { Delivery, DeliveryActions } from '../transports/subscription.interface';
import { HandlerDefinition, HandlerRegistry } from './handler-registry';
import { describeMessage, errorLine, failureLogLine, messageContext } from './delivery-description';
import { Failure, SettleDecision, settleDecision } from './settle-decision';

/**
 * What happens to every delivery, on every transport: decode the envelope, find the group's handler,
 * validate the payload, run handler and inbox record in one transaction, settle. A failure at any step is
 * classified and the retry engine decides what becomes of the message; bad messages never stop a consumer.
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
  ) {
    this.classifier = new ErrorClassifier([...options.classification]);
  }

  /** From now on, deliveries waiting for an inline retry are left unsettled (redelivered later). */
  stop(): void {
    this.stopping = true;
  }

  resume(): void {
    this.stopping = false;
  }

  async handle(group: string, delivery: Delivery, actions: DeliveryActions): Promise<void> {
    if (isRedriveForAnotherGroup(delivery.wire.headers, group)) {
      // A redrive brings a message back to the one group that failed it; the others had it already.
      await actions.ack();
      this.metrics.consumed.inc({ group, destination: delivery.wire.destination, outcome: 'skipped' });
      return;
    }
    const decoded = decodeEnvelope(delivery.wire);
    const destination = delivery.wire.destination;
    const defaultPolicy = this.options.retryDefaults[destination];
    if (!decoded.ok) return this.fail(group, delivery, actions, decoded.failure, defaultPolicy);

    const envelope = decoded.envelope;
    const handler = this.registry.find(group, destination, envelope.type);
    if (!handler) {
      const failure = {
        category: FailureCategory.VALIDATION,
        code: 'UNKNOWN_TYPE',
        messageId: envelope.messageId,
      };
      return this.fail(group, delivery, actions, failure, defaultPolicy);
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
      return this.fail(group, delivery, actions, failure, handler.policy);
    }
    await this.run(group, delivery, actions, envelope, handler, parsed.data);
  }

  private async run(
    group: string,
    delivery: Delivery,
    actions: DeliveryActions,
    envelope: MessageEnvelope,
    handler: HandlerDefinition,
    payload: unknown,
  ): Promise<void> {
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
            const lagSeconds = Math.max(0, Date.now() - envelope.occurredAt.getTime()) / 1000;
            this.metrics.endToEnd.observe(labels, lagSeconds);
            await handler.invoke(payload, messageContext(group, delivery, envelope, attempt, scope.manager));
          }),
        );
        if (outcome === 'DUPLICATE') {
          this.logger.debug(`${describeMessage(envelope, group, attempt)}: duplicate, skipped.`);
        }
        await actions.ack();
        this.metrics.consumed.inc({ ...labels, outcome: outcome === 'DUPLICATE' ? 'duplicate' : 'handled' });
        return;
      } catch (error) {
        const { category, code } = this.classifier.classify(error);
        const failure: Failure = { category, code, messageId: envelope.messageId, detail: errorLine(error) };
        const decision = this.decide(failure, attempt, handler.policy);
        if (decision.kind !== 'RETRY_INLINE')
          return this.settle(group, delivery, actions, failure, attempt, decision);
        this.metrics.failedAttempts.inc({ ...labels, category });
        this.metrics.retried.inc({ ...labels, mode: 'inline' });
        this.logFailure(group, delivery, failure, attempt, `retrying inline in ${decision.delayMs} ms`);
        if (!(await this.wait(decision.delayMs, actions))) return;
        attempt = decision.nextAttempt;
      }
    }
  }

  private async fail(
    group: string,
    delivery: Delivery,
    actions: DeliveryActions,
    failure: Failure,
    policy: ResolvedRetryPolicy | undefined,
  ): Promise<void> {
    const decision = this.decide(failure, delivery.attempt, policy);
    if (decision.kind === 'RETRY_INLINE') {
      // Decoding and validation fail the same way every time: retrying in place cannot help.
      return this.settle(group, delivery, actions, failure, delivery.attempt, {
        kind: 'DEAD_LETTER',
        reason: 'NO_RETRY_PATH',
      });
    }
    return this.settle(group, delivery, actions, failure, delivery.attempt, decision);
  }

  private decide(failure: Failure, attempt: number, policy: ResolvedRetryPolicy | undefined): RetryDecision {
    return decideRetry({
      category: failure.category,
      attempt,
      policy,
      destination: { ordered: this.transport.capabilities.orderedStream },
      capabilities: this.transport.capabilities,
      now: () => new Date(),
      random: Math.random,
    });
  }

  private async settle(
    group: string,
    delivery: Delivery,
    actions: DeliveryActions,
    failure: Failure,
    attempt: number,
    decision: SettleDecision,
  ): Promise<void> {
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
        now: new Date(),
      },
      delivery.wire.headers,
    );
    const labels = { group, destination: delivery.wire.destination };
    this.metrics.failedAttempts.inc({ ...labels, category: failure.category });
    await settleDecision(actions, decision, headers);
    if (decision.kind === 'DEAD_LETTER')
      this.metrics.deadLettered.inc({ ...labels, category: failure.category });
    else if (decision.kind !== 'REJECT') {
      this.metrics.retried.inc({
        ...labels,
        mode: decision.kind === 'PAUSE_AND_RETRY' ? 'pause' : 'retry_destination',
      });
    }
  }

  /** Sleeps for an inline retry, keeping the consumer alive; false when the consumer stops meanwhile. */
  private async wait(delayMs: number, actions: DeliveryActions): Promise<boolean> {
    const until = Date.now() + delayMs;
    while (Date.now() < until) {
      if (this.stopping) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, until - Date.now())));
      await actions.keepAlive();
    }
    return !this.stopping;
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
