import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { withoutFailureHeaders } from '../failure/failure-copy';
import { decodeEnvelope } from '../envelope/envelope-codec';
import { FailureCategory } from '../errors/failure-category';
import { MessageEnvelope } from '../envelope/message-envelope';
import { isRedriveForAnotherGroup } from '../failure/redrive-target-group';
import { MessageHeaders } from '../envelope/message-headers';
import { InboxBatch } from '../inbox/inbox-batch';
import { InboxDelivery, InboxOutcome, InboxService } from '../inbox/inbox.service';
import { TransactionAbortedError } from '../errors/transaction-aborted.error';
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

  /** Handles one delivery and says how to settle it. */
  async handle(group: string, received: Delivery, transportControl: DeliveryControl): Promise<Settlement> {
    if (isRedriveForAnotherGroup(received.wire.headers, group)) return this.skipRedrive(group, received);
    const delivery = trustedDelivery(received);
    const control = this.controlOf(transportControl);
    const notDueFor = this.notDueFor(delivery);
    if (notDueFor > 0) {
      const tier = tierAtMost(
        notDueFor,
        groupRetryTiers(this.registry, this.options, group, delivery.wire.destination),
      );
      if (tier !== undefined) return this.failures.forward(group, delivery, control, tier);
      if (!(await this.wait(notDueFor, control))) return LEAVE;
    }
    const prepared = this.prepare(group, delivery, control);
    if ('settle' in prepared) return prepared.settle();
    return this.run(prepared.ready);
  }

  /**
   * Handles deliveries of one lane (no two of them may run side by side: one key's messages, or several
   * keys that share a lane), in order, and says how to settle each, in the same order. Consecutive
   * deliveries ready for their handler, up to `consumers.batchSize` distinct messages, share one transaction
   * (`InboxBatch`): their inbox records in one statement, then each handler, then one commit. A handler
   * that throws (or swallows a database error that ended the transaction) spoils the transaction: it is
   * rolled back whole, the deliveries before the failing one run again, each alone in a transaction of its
   * own (their handlers run a second time, and never a third because of a neighbour; their writes and
   * after-commit callbacks happen once), and the failure takes the path of a single delivery (retry inline,
   * pause, retry destination, dead letter). A commit that fails, or whose answer is lost, sends each
   * delivery of the batch again alone: the inbox tells which committed after all (DUPLICATE: its handler
   * does not run again, and the callbacks its committed try registered run then). Anything else (a failure
   * before the handler, a message not due yet) goes alone, after the batch before it. Nothing is answered
   * ACK before its transaction committed. After a PAUSE or a LEAVE the rest is LEAVE.
   */
  async handleBatch(
    group: string,
    received: readonly Delivery[],
    transportControl: DeliveryControl,
  ): Promise<Settlement[]> {
    const control = this.controlOf(transportControl);
    const settled = new Map<number, Settlement>();
    const halted = () => control.isStopping() || transportControl.isHalted?.() === true;
    let index = 0;
    while (index < received.length && !halted()) {
      const together: ReadyDelivery[] = [];
      const ids = new Set<string>();
      let alone: (() => Promise<Settlement>) | undefined;
      for (; index < received.length && together.length < this.options.consumers.batchSize; index++) {
        const step = this.batchStep(group, received[index], control);
        if ('settlement' in step) {
          settled.set(index, step.settlement);
        } else if ('alone' in step) {
          alone = step.alone;
          break;
        } else if (ids.has(step.ready.envelope.messageId)) {
          break; // the same message again: in the next batch, where the inbox knows it
        } else {
          ids.add(step.ready.envelope.messageId);
          together.push({ index, state: step.ready });
        }
      }
      if (!(await this.runTogether(together, settled, halted)) || halted()) break;
      if (alone) {
        const settlement = await alone();
        settled.set(index++, settlement);
        if (!continues(settlement)) break;
      }
    }
    const stop = Math.min(...[...settled].filter(([, s]) => !continues(s)).map(([i]) => i));
    return received.map((_, i) => (i <= stop ? settled.get(i) : undefined) ?? LEAVE);
  }

  /**
   * What to do with one delivery of a batch: settled already (a redrive for another group), ready for its
   * handler, or to go alone.
   */
  private batchStep(
    group: string,
    received: Delivery,
    control: DeliveryControl,
  ): { settlement: Settlement } | { ready: RunState } | { alone: () => Promise<Settlement> } {
    if (isRedriveForAnotherGroup(received.wire.headers, group)) {
      return { settlement: this.skipRedrive(group, received) };
    }
    const delivery = trustedDelivery(received);
    if (this.notDueFor(delivery) > 0) return { alone: () => this.handle(group, received, control) };
    const prepared = this.prepare(group, delivery, control);
    return 'settle' in prepared ? { alone: prepared.settle } : prepared;
  }

  /**
   * Runs deliveries in one transaction and settles them (see `handleBatch`). False when one was not settled
   * (PAUSE, LEAVE), or the consumer stops or loses the lane after a failure: the batch stops there.
   */
  private async runTogether(
    together: readonly ReadyDelivery[],
    settled: Map<number, Settlement>,
    halted: () => boolean,
  ): Promise<boolean> {
    let rest = together;
    while (rest.length > 0) {
      const tried = await this.tryTogether(rest);
      if (tried.kind === 'COMMITTED') {
        const { outcomes } = tried;
        return settleInOrder(rest, settled, ({ state }, i) => this.afterOutcome(state, outcomes[i]));
      }
      if (tried.kind === 'LOST') {
        // Nothing of the batch is known to hold: each goes again alone, and the inbox tells what did.
        for (const { state } of rest) state.commitLost ||= tried.atCommit;
        return this.eachAlone(rest, settled, halted);
      }
      // Rolled back whole: the ones before the failure go again alone, where no neighbour can undo them.
      if (!(await this.eachAlone(rest.slice(0, tried.at), settled, halted))) return false;
      const { index, state } = rest[tried.at];
      const settlement = (await this.afterFailure(state, tried.error)) ?? (await this.run(state));
      settled.set(index, settlement);
      if (!continues(settlement) || halted()) return false;
      rest = rest.slice(tried.at + 1);
    }
    return true;
  }

  /** Runs and settles deliveries one by one, each in a transaction of its own (LEAVE once halted). */
  private eachAlone(
    deliveries: readonly ReadyDelivery[],
    settled: Map<number, Settlement>,
    halted: () => boolean,
  ): Promise<boolean> {
    return settleInOrder(deliveries, settled, ({ state }) =>
      halted() ? Promise.resolve(LEAVE) : this.run(state),
    );
  }

  /**
   * One try of deliveries in one transaction: committed (with each one's outcome), failed at one of them
   * (rolled back whole), or lost: the transaction could not begin, or its commit failed (not durable, or
   * the answer was lost and nobody knows: the callbacks of each delivery's try are kept as unconfirmed).
   */
  private async tryTogether(together: readonly ReadyDelivery[]): Promise<Tried> {
    let batch: InboxBatch;
    try {
      batch = await this.inbox.begin(together.map(({ state }) => state.inboxDelivery));
    } catch (error) {
      return { kind: 'LOST', atCommit: false, error }; // the database away: each fails alone, logged there
    }
    const outcomes: InboxOutcome[] = [];
    for (const [at, { state }] of together.entries()) {
      try {
        outcomes.push(await this.attempt(state, batch, at));
      } catch (error) {
        await batch.rollback();
        return { kind: 'FAILED', at, error };
      }
    }
    try {
      await batch.commit();
    } catch (error) {
      // COMMIT answered ROLLBACK for a single delivery: its own failure (for a batch: whose, nobody knows).
      if (error instanceof TransactionAbortedError && together.length === 1) {
        return { kind: 'FAILED', at: 0, error };
      }
      for (const { state } of together) state.unconfirmed.push(...state.tryCallbacks);
      if (together.length > 1) {
        this.logger.warn(
          `A batch of ${together.length} deliveries did not commit (${errorLine(error)}); each goes again alone.`,
        );
      }
      return { kind: 'LOST', atCommit: true, error };
    }
    return { kind: 'COMMITTED', outcomes };
  }

  private skipRedrive(group: string, received: Delivery): Settlement {
    // A redrive brings a message back to the one group that failed it; the others had it already.
    this.metrics.consumed.inc({ group, destination: received.wire.destination, outcome: 'skipped' });
    return ACK;
  }

  private controlOf(transportControl: DeliveryControl): DeliveryControl {
    return {
      keepAlive: () => transportControl.keepAlive(),
      isStopping: () => this.stopping || transportControl.isStopping(),
    };
  }

  /**
   * Decodes the envelope, finds the group's handler and validates the payload: ready to run, or how to
   * settle a delivery that cannot be (dead-letter or drop per the policy).
   */
  private prepare(
    group: string,
    delivery: Delivery,
    control: DeliveryControl,
  ): { ready: RunState } | { settle: () => Promise<Settlement> } {
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
    if (!decoded.ok) {
      return {
        settle: () => this.failures.settle(failed(decoded.failure), decideUnprocessable(defaultPolicy)),
      };
    }
    const envelope = decoded.envelope;
    const handler = this.registry.find(group, destination, envelope.type);
    if (!handler) {
      const failure = {
        category: FailureCategory.VALIDATION,
        code: 'UNKNOWN_TYPE',
        messageId: envelope.messageId,
      };
      return { settle: () => this.failures.settle(failed(failure), decideUnprocessable(defaultPolicy)) };
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
      return { settle: () => this.failures.settle(failed(failure), decideUnprocessable(handler.policy)) };
    }
    const inboxDelivery: InboxDelivery = {
      group,
      envelope,
      body: delivery.wire.body,
      redriveId: delivery.wire.headers[MessageHeaders.REDRIVE_ID] ?? '',
    };
    return {
      ready: {
        group,
        delivery,
        control,
        envelope,
        handler,
        payload: parsed.data,
        inboxDelivery,
        attempt: firstAttempt(delivery),
        failedInPlace: false,
        commitLost: false,
        tryCallbacks: [],
        unconfirmed: [],
        labels: { group, destination: envelope.destination },
      },
    };
  }

  /**
   * Runs the handler, each try in a transaction of its own, until it succeeds or its failure is settled. A
   * commit that fails goes again once (its answer may have been lost after it committed: the inbox tells)
   * before it counts as the delivery's failure.
   */
  private async run(state: RunState): Promise<Settlement> {
    for (;;) {
      const tried = await this.tryTogether([{ index: 0, state }]);
      if (tried.kind === 'COMMITTED') return this.afterOutcome(state, tried.outcomes[0]);
      if (tried.kind === 'LOST' && tried.atCommit && !state.commitLost) {
        state.commitLost = true;
        this.logger.warn(
          `${describeMessage(state.envelope, state.group, state.attempt)}: the commit failed ` +
            `(${errorLine(tried.error)}); it goes again once, and the inbox tells whether it committed.`,
        );
        continue;
      }
      const settlement = await this.afterFailure(state, tried.error);
      if (settlement) return settlement;
    }
  }

  /** One try: the inbox record and the handler, in the transaction of `batch` (its delivery number `at`). */
  private attempt(state: RunState, batch: InboxBatch, at: number): Promise<InboxOutcome> {
    const { group, delivery, envelope, handler, payload, labels } = state;
    const spanAttributes = {
      'messaging.consumer.group.name': group,
      'messaging.destination.partition.id': delivery.origin.partition?.toString() ?? '',
      'messaging.kafka.offset': delivery.origin.offset ?? '',
      'messaging.message.attempt': state.attempt,
    };
    const callbacks: Array<() => void> = (state.tryCallbacks = []);
    return this.tracing.process(this.transport.kind, delivery.wire, spanAttributes, () =>
      batch.run(
        at,
        async (scope, failedBefore) => {
          // The inbox did not have it: no earlier try committed, their callbacks are void.
          state.unconfirmed.length = 0;
          // Deliveries that failed in place before this one, in this process or another.
          state.attempt = Math.max(state.attempt, failedBefore + 1);
          state.failedInPlace ||= failedBefore > 0;
          const lagSeconds = Math.max(0, this.clock.now() - envelope.occurredAt.getTime()) / 1000;
          this.metrics.endToEnd.observe(labels, lagSeconds);
          await handler.invoke(
            payload,
            messageContext(group, delivery, envelope, state.attempt, scope.manager),
          );
        },
        callbacks,
      ),
    );
  }

  /**
   * How a committed try ends: ACK (handled or a duplicate), or a CONFLICT dead-lettered. A DUPLICATE after
   * a try whose commit answer was lost: that try did commit, so the after-commit callbacks it registered
   * run now; HANDLED: it did not, and they are dropped (this try's own ran at its commit).
   */
  private async afterOutcome(state: RunState, outcome: InboxOutcome): Promise<Settlement> {
    const { group, delivery, control, envelope, labels } = state;
    const unconfirmed = state.unconfirmed.splice(0);
    if (outcome === 'DUPLICATE') this.runCallbacks(unconfirmed);
    if (outcome === 'CONFLICT')
      return this.conflict({ group, delivery, control, attempt: state.attempt }, envelope);
    if (outcome === 'DUPLICATE') {
      this.logger.debug(`${describeMessage(envelope, group, state.attempt)}: duplicate, skipped.`);
    }
    this.metrics.consumed.inc({ ...labels, outcome: outcome === 'DUPLICATE' ? 'duplicate' : 'handled' });
    return ACK;
  }

  /**
   * A try failed (its writes rolled back): the retry engine decides. Returns the settlement, or undefined
   * once an inline retry's wait is over and the next try is due (`state.attempt` counts it).
   */
  private async afterFailure(state: RunState, error: unknown): Promise<Settlement | undefined> {
    const { group, delivery, control, envelope, handler, inboxDelivery, labels } = state;
    const attempt = state.attempt;
    const { category, code } = this.classifier.classify(error);
    const failure: Failure = { category, code, messageId: envelope.messageId, detail: errorLine(error) };
    const failed: FailedDelivery = { group, delivery, control, failure, attempt };
    const decision = this.decide(failure, attempt, handler.policy);
    if (decision.kind === 'PAUSE_AND_RETRY' || decision.kind === 'RETRY_INLINE') {
      await this.rememberFailedAttempt(inboxDelivery, attempt);
      state.failedInPlace = true;
    }
    if (decision.kind !== 'RETRY_INLINE') {
      const settlement = await this.failures.settle(failed, decision);
      if (state.failedInPlace && settlement.kind === 'ACK') await this.forgetFailedAttempts(inboxDelivery);
      return settlement;
    }
    this.metrics.failedAttempts.inc({ ...labels, category });
    this.metrics.retried.inc({ ...labels, mode: 'inline' });
    this.failures.logFailure(failed, `retrying inline in ${decision.delayMs} ms`);
    if (!(await this.wait(decision.delayMs, control))) return LEAVE;
    state.attempt = decision.nextAttempt;
    return undefined;
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

  /** Runs after-commit callbacks of a commit that did happen; one that throws is logged, the others run. */
  private runCallbacks(callbacks: ReadonlyArray<() => void>): void {
    for (const callback of callbacks) {
      try {
        callback();
      } catch (error) {
        this.logger.error(`An after-commit callback failed: ${errorLine(error)}`);
      }
    }
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

/**
 * How one try of deliveries in one transaction ended: committed, failed at the delivery number `at`
 * (rolled back), or lost (`atCommit`: the commit failed, its outcome perhaps unknown; else it never began).
 */
type Tried =
  | { readonly kind: 'COMMITTED'; readonly outcomes: InboxOutcome[] }
  | { readonly kind: 'FAILED'; readonly at: number; readonly error: unknown }
  | { readonly kind: 'LOST'; readonly atCommit: boolean; readonly error: unknown };

/** A delivery ready for its handler, and what its tries learnt so far. */
interface RunState {
  readonly group: string;
  readonly delivery: Delivery;
  readonly control: DeliveryControl;
  readonly envelope: MessageEnvelope;
  readonly handler: HandlerDefinition;
  readonly payload: unknown;
  readonly inboxDelivery: InboxDelivery;
  readonly labels: { readonly group: string; readonly destination: string };
  attempt: number;
  failedInPlace: boolean;
  /** A commit of this delivery failed already (it went again once: the inbox told whether it held). */
  commitLost: boolean;
  /** The after-commit callbacks its current try registered. */
  tryCallbacks: Array<() => void>;
  /** Callbacks of tries whose commit failed: run if a later try finds it committed (DUPLICATE). */
  readonly unconfirmed: Array<() => void>;
}

/** A delivery of a batch ready for its handler, and its place in the batch. */
interface ReadyDelivery {
  readonly index: number;
  readonly state: RunState;
}

/**
 * Settles deliveries one after another into `settled`; stops at one not settled (PAUSE, LEAVE): false then.
 */
async function settleInOrder(
  deliveries: readonly ReadyDelivery[],
  settled: Map<number, Settlement>,
  settle: (delivery: ReadyDelivery, i: number) => Promise<Settlement>,
): Promise<boolean> {
  for (const [i, delivery] of deliveries.entries()) {
    const settlement = await settle(delivery, i);
    settled.set(delivery.index, settlement);
    if (!continues(settlement)) return false;
  }
  return true;
}

/** True when the deliveries after this settlement go on (it is not a PAUSE or a LEAVE). */
function continues(settlement: Settlement): boolean {
  return settlement.kind !== 'PAUSE' && settlement.kind !== 'LEAVE';
}
