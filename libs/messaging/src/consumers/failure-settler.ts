import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { MessageEnvelope } from '../envelope/message-envelope';
import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { FailureCategory } from '../errors/failure-category';
import { DeadLetterCopyPolicy, failureHeaders } from '../failure/failure-copy';
import { publishUntilConfirmed } from '../failure/publish-until-confirmed';
import { InboxDelivery, InboxService } from '../inbox/inbox.service';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { ErrorClassifier } from '../retry/error-classifier';
import { RetryDecision } from '../retry/retry-decision';
import { decideHold } from '../retry/hold-decision';
import { PermanentError } from '../errors/permanent.error';
import { requestedRetryDelay } from '../retry/retry-after';
import { decideRetry, decideUnprocessable } from '../retry/retry-decision-engine';
import { ResolvedRetryPolicy } from '../retry/retry-policy.interface';
import { destinationNames } from '../topology/destination-names';
import { MessageTransport } from '../transports/message-transport.interface';
import { Delivery, DeliveryControl, Settlement } from '../transports/delivery-contract';
import { errorLine, failureLogLine } from './delivery-description';
import { HeldMessages, HoldReason } from './held-messages';
import { waitKeepingAlive } from './keep-alive-wait';
import { RunState } from './run-state';
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
 * The one owner of the consumer's failure path: every failure of a delivery comes here (not decodable, no
 * handler, a bad payload, an id conflict, a handler or transaction that failed), is classified, decided by
 * the retry engine, counted and logged, and settled: an inline retry waited for, a dead-letter or retry
 * copy built with its failure headers and published until the broker confirms, and only then the
 * settlement that acks the source (publish → confirm → settle). The pipeline only runs handlers.
 */
@Injectable()
export class FailureSettler {
  private readonly logger = new Logger('MessagingConsumer');
  private readonly classifier: ErrorClassifier;

  constructor(
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    private readonly metrics: MessagingMetrics,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly inbox: InboxService,
    private readonly held: HeldMessages,
  ) {
    this.classifier = new ErrorClassifier([...options.classification]);
  }

  /** A delivery that cannot be handled at all: dead-lettered or dropped, as `policy` says. */
  unprocessable(failed: FailedDelivery, policy: ResolvedRetryPolicy | undefined): Promise<Settlement> {
    return this.settle(failed, decideUnprocessable(policy));
  }

  /**
   * A different message under the id of one handled before: not handled (the first is kept), and not
   * dropped either: dead-lettered as ID_CONFLICT, whatever the policy, for someone to look at.
   */
  conflict(failed: Omit<FailedDelivery, 'failure'>, envelope: MessageEnvelope): Promise<Settlement> {
    const failure: Failure = {
      category: FailureCategory.VALIDATION,
      code: 'ID_CONFLICT',
      messageId: envelope.messageId,
      detail: 'a different payload than the message handled first under this id',
    };
    return this.settle({ ...failed, failure }, { kind: 'DEAD_LETTER', reason: 'NON_RETRYABLE' });
  }

  /**
   * A try of a ready delivery failed (its writes rolled back): the retry engine decides. Returns the
   * settlement, or undefined once an inline retry's wait is over and the next try is due (`state.attempt`
   * counts it). Attempts retried in place are counted in the database, so `maxAttempts` holds across
   * restarts.
   */
  async handlerFailed(state: RunState, error: unknown): Promise<Settlement | undefined> {
    const { group, delivery, control, envelope, handler, inboxDelivery } = state;
    const attempt = state.attempt;
    const { category, code } = this.classifier.classify(error);
    const failure: Failure = { category, code, messageId: envelope.messageId, detail: errorLine(error) };
    const failed: FailedDelivery = { group, delivery, control, failure, attempt };
    const requested = requestedRetryDelay(error, this.clock.now());
    const decision = this.decide(
      failure,
      attempt,
      handler.policy,
      requested,
      error instanceof PermanentError,
    );
    if (decision.kind === 'PAUSE_AND_RETRY' || decision.kind === 'RETRY_INLINE') {
      await this.rememberFailedAttempt(inboxDelivery, attempt);
      state.failedInPlace = true;
    }
    if (decision.kind !== 'RETRY_INLINE') {
      const settlement = await this.settle(failed, decision);
      if (state.failedInPlace && settlement.kind === 'ACK') await this.forgetFailedAttempts(inboxDelivery);
      return settlement;
    }
    this.report(failed, `retrying inline in ${decision.delayMs} ms${asked(decision)}`, 'inline');
    if (!(await waitKeepingAlive(this.clock, decision.delayMs, control))) return LEAVE;
    state.attempt = decision.nextAttempt;
    return undefined;
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

  /**
   * A message this consumer cannot read yet (`reason`): held in place for a backoff within
   * `consumers.versionHold`, then dead-lettered (or dropped, as `policy` says for VALIDATION ones). Returns the
   * settlement (PAUSE on an ordered stream; the dead-letter or drop at the window's end; LEAVE when the
   * consumer stops during a wait), or undefined once a wait in the consumer is over and the message is to be
   * read again. The first hold of a message logs a warning; its window starts then (see `HeldMessages`).
   */
  async hold(
    failed: FailedDelivery,
    policy: ResolvedRetryPolicy | undefined,
    reason: HoldReason,
  ): Promise<Settlement | undefined> {
    const { group, delivery, control, failure } = failed;
    const messageId = failure.messageId ?? '';
    const destination = delivery.wire.destination;
    const window = this.options.consumers.versionHold;
    const { heldForMs, hold } = this.held.hold(group, destination, messageId, reason);
    const decision = decideHold({
      category: failure.category,
      heldForMs,
      hold,
      window,
      policy,
      capabilities: this.transport.capabilities,
      random: () => this.clock.random(),
    });
    if (decision.kind !== 'HOLD') {
      this.held.release(group, messageId);
      return this.settle(failed, decision);
    }
    this.metrics.holds.inc({ group, destination, reason });
    const line = failureLogLine(
      group,
      delivery,
      failure,
      failed.attempt,
      holdOutcome(decision, heldForMs, window.windowMs),
    );
    if (hold === 1) this.logger.warn(line);
    else this.logger.debug(line);
    if (decision.how === 'PAUSE') return { kind: 'PAUSE', delayMs: decision.delayMs };
    return (await waitKeepingAlive(this.clock, decision.delayMs, control)) ? undefined : LEAVE;
  }

  /** The message is handled after all (a later look could read it): no longer held. */
  released(group: string, messageId: string): void {
    const heldForMs = this.held.release(group, messageId);
    if (heldForMs === undefined) return;
    this.logger.log(
      `Message ${messageId} (group ${group}) is no longer held, after ${heldForMs} ms: it can be read now.`,
    );
  }

  /** Settles a decision that ends the delivery's handling here: reported, then copied and confirmed. */
  private async settle(failed: FailedDelivery, decision: SettleDecision): Promise<Settlement> {
    const { group, delivery, control, failure, attempt } = failed;
    const what =
      decision.kind === 'DEAD_LETTER'
        ? `dead-lettered (${decision.reason}) to ${destinationNames.deadLetter(delivery.wire.destination, group)}`
        : `${decision.kind.toLowerCase().replace(/_/g, ' ')}${'delayMs' in decision ? ` in ${decision.delayMs} ms${asked(decision)}` : ''}`;
    this.report(failed, what);
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
    const labels = { group, destination: delivery.wire.destination };
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

  /**
   * Every failure is reported here, once: a log line (ids and codes, never the payload) and the failed
   * attempt counted; an inline retry is counted as retried at once (the others once their copy is confirmed).
   */
  private report(failed: FailedDelivery, outcome: string, retriedNow?: 'inline'): void {
    const { group, delivery, failure, attempt } = failed;
    const labels = { group, destination: delivery.wire.destination };
    this.metrics.failedAttempts.inc({ ...labels, category: failure.category });
    if (retriedNow) this.metrics.retried.inc({ ...labels, mode: retriedNow });
    this.logger.warn(failureLogLine(group, delivery, failure, attempt, outcome));
  }

  private decide(
    failure: Failure,
    attempt: number,
    policy: ResolvedRetryPolicy | undefined,
    requestedDelayMs: number | undefined,
    permanent: boolean,
  ): RetryDecision {
    return decideRetry({
      requestedDelayMs,
      permanent,
      category: failure.category,
      attempt,
      policy,
      destination: { ordered: this.transport.capabilities.orderedStream },
      capabilities: this.transport.capabilities,
      now: () => new Date(this.clock.now()),
      random: () => this.clock.random(),
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

  private deadLetterPolicy(): DeadLetterCopyPolicy {
    const { keySecret, carryHeaders } = this.options.deadLetter;
    // The consumer explorer refuses to start an application with consumers and no key secret.
    if (!keySecret) throw new Error('deadLetter.keySecret is missing');
    return { keySecret, carryHeaders };
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

/** For a log line: the delay the failure asked for, when it asked, and whether the policy capped it. */
function asked(decision: { readonly delayMs: number; readonly requestedMs?: number }): string {
  const { requestedMs, delayMs } = decision;
  if (requestedMs === undefined) return '';
  return delayMs < requestedMs
    ? ` (the error asked for ${requestedMs} ms; capped by the retry policy)`
    : ` (the error asked for ${requestedMs} ms)`;
}

/** For a log line: how a message is held, and until when at most. */
function holdOutcome(
  decision: { how: 'PAUSE' | 'WAIT'; delayMs: number },
  heldForMs: number,
  windowMs: number,
): string {
  const where = decision.how === 'PAUSE' ? 'its partition paused' : 'its delivery kept';
  return (
    `held (${where}), looked at again in ${decision.delayMs} ms; held ${Math.round(heldForMs / 1000)} s ` +
    `of ${Math.round(windowMs / 1000)} s (consumers.versionHold.windowMs), then dead-lettered`
  );
}
