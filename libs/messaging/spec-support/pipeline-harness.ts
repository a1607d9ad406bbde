import { TenantRouting } from '../src/transaction/tenant-routing';
import { z } from 'zod';
import { FakeClock } from '../src/common/fake-clock';
import { MessageContext } from '../src/consumers/message-context';
import { DeliveryPipeline } from '../src/consumers/delivery-pipeline';
import { FailureSettler } from '../src/consumers/failure-settler';
import { HandlerRegistry } from '../src/consumers/handler-registry';
import { HeldMessages } from '../src/consumers/held-messages';
import { encodeEnvelope } from '../src/envelope/envelope-codec';
import { defineEvent, EventDefinition } from '../src/envelope/event-definition';
import { MessagingModuleOptions } from '../src/messaging-options.interface';
import { MessageHeaders } from '../src/envelope/message-headers';
import { newMessageId } from '../src/envelope/message-id';
import { WireMessage } from '../src/envelope/wire-message';
import { TransactionAbortedError } from '../src/errors/transaction-aborted.error';
import { InboxDelivery, InboxOutcome, InboxService } from '../src/inbox/inbox.service';
import { InboxUnreachableError } from '../src/inbox/inbox-unreachable.error';
import { TenantParking } from '../src/consumers/tenant-parking';
import { MessageTracing } from '../src/observability/message-tracing';
import { MessagingMetrics } from '../src/observability/messaging-metrics';
import { resolveMessagingOptions } from '../src/options/resolve-messaging-options';
import { resolveRetryPolicy } from '../src/retry/retry-policy';
import { RetryPolicyOptions } from '../src/retry/retry-policy.interface';
import { MessageTransport } from '../src/transports/message-transport.interface';
import { PublishOutcome } from '../src/transports/publish-outcome';
import { TransportCapabilities } from '../src/retry/transport-capabilities';
import { Delivery, DeliveryControl, Settlement } from '../src/transports/delivery-contract';

/**
 * The consumer pipeline over an inbox and a transport in memory, for unit specs of its batch settlement:
 * the spec scripts what handlers do, how commits answer, and what the broker answers to copies, and reads
 * back what became durable, what was published and how often each handler ran. Not part of the package.
 */

export const KAFKA: TransportCapabilities = {
  orderedStream: true,
  delayedDelivery: false,
  retryDestinations: true,
};
export const RABBITMQ: TransportCapabilities = {
  orderedStream: false,
  delayedDelivery: true,
  retryDestinations: false,
};
export const GROUP = 'billing';
export const DESTINATION = 'orders';

export const OrderPlaced = defineEvent({
  type: 'OrderPlaced',
  destination: DESTINATION,
  schema: z.object({ orderId: z.number().int(), customer: z.string() }),
  key: (order) => order.customer,
});

/** A transient failure, as a flaky downstream throws it. */
export class Flaky extends Error {
  readonly retriable = true;
}

/** A database error as TypeORM raises it (a unique violation): what a handler may catch and swallow. */
export function uniqueViolation(): Error {
  return Object.assign(new Error('duplicate key value violates unique constraint'), {
    name: 'QueryFailedError',
    driverError: { code: '23505', severity: 'ERROR' },
  });
}

/** A message for `OrderPlaced` as the relay puts it on the wire. */
export function orderWire(
  payload: object = { orderId: 1, customer: 'c1' },
  headers: Record<string, string> = {},
  destination = DESTINATION,
  type = 'OrderPlaced',
): WireMessage {
  const wire = encodeEnvelope(
    {
      messageId: newMessageId(),
      type,
      destination,
      key: 'c1',
      occurredAt: new Date(),
      headers: {},
    },
    JSON.stringify(payload),
  );
  return { ...wire, headers: { ...wire.headers, ...headers } };
}

/** The message id of a wire message. */
export function idOf(wire: WireMessage): string {
  return wire.headers[MessageHeaders.ID];
}

/**
 * How the database answers a commit: OK; FAIL (not durable, an error: a deferred constraint, the server
 * refused); LOST (durable, but the answer never came: the connection dropped after the server committed).
 */
export type CommitAnswer = 'OK' | 'FAIL' | 'LOST';

/** What a handler's context gives the spec's handler: its batch, to register callbacks or swallow an error. */
export interface FakeManager {
  readonly batch: FakeBatch;
  /** The after-commit list of the delivery's try (as `OutboxService` fills it). */
  readonly afterCommit: Array<() => void>;
  /**
   * A database error caught and not rethrown that ended the transaction. `seen: false` models a statement
   * past TypeORM: nothing notices until COMMIT answers ROLLBACK.
   */
  swallow(error: unknown, seen?: boolean): void;
}

/** The inbox in memory: handled ids and the failed attempts of messages retried in place. */
export class FakeInbox {
  readonly handled = new Set<string>();
  /** Ids as their transactions committed, in order (twice if committed twice). */
  readonly applied: string[] = [];
  readonly failed = new Map<string, number>();
  /** Batch transactions committed (or tried), and rolled back. */
  commits = 0;
  rollbacks = 0;
  /** How the next commits answer, in turn; OK once the script runs out. */
  readonly commitAnswers: CommitAnswer[] = [];
  /** How the next begins answer, in turn (FAIL: the database is away); OK once the script runs out. */
  readonly beginAnswers: Array<'OK' | 'FAIL'> = [];
  /** Tenants whose database does not answer: a batch of theirs cannot begin, for as long as they are here. */
  readonly downTenants = new Set<string>();
  /**
   * How the next rollbacks find their connection, in turn (BROKEN: the database went away under the
   * transaction, so the rollback could not be sent); OK once the script runs out.
   */
  readonly rollbackAnswers: Array<'OK' | 'BROKEN'> = [];
  /** The ids of each batch begun. */
  readonly batches: string[][] = [];
  /** The tenants of each batch begun (one each, or `(none)` with tenants off). */
  readonly batchTenants: string[][] = [];
  /** Per id: tries rolled back because another delivery of their transaction failed. */
  readonly neighbourRollbacks = new Map<string, number>();
  /** Per id: tries whose commit failed, was lost, or answered ROLLBACK. */
  readonly commitFailures = new Map<string, number>();
  /** Per id: tries that failed themselves (threw, or swallowed an error that ended the transaction). */
  readonly ownFailures = new Map<string, number>();
  /**
   * What became final, in order: `applied:<id>` at each commit that made a message durable, `copy:<id>` at
   * each dead-letter or retry copy the broker confirmed (the harness writes those).
   */
  readonly log: string[] = [];

  /** The next commits fail (not durable). */
  set failCommits(count: number) {
    this.commitAnswers.push(...Array<CommitAnswer>(count).fill('FAIL'));
  }

  /** The next batches cannot begin (the database is away). */
  set failBegins(count: number) {
    this.beginAnswers.push(...Array<'FAIL'>(count).fill('FAIL'));
  }

  async begin(deliveries: readonly InboxDelivery[]): Promise<FakeBatch> {
    if (this.beginAnswers.shift() === 'FAIL') {
      throw new InboxUnreachableError(new Error('connection refused'));
    }
    if (deliveries.some((d) => d.tenant !== undefined && this.downTenants.has(d.tenant))) {
      throw new InboxUnreachableError(new Error('connection refused'));
    }
    const ids = deliveries.map((d) => d.envelope.messageId);
    if (new Set(ids).size !== ids.length) throw new Error('an inbox batch holds each message once');
    this.batches.push(ids);
    this.batchTenants.push([...new Set(deliveries.map((d) => d.tenant ?? '(none)'))]);
    return new FakeBatch(this, ids);
  }

  async holds(delivery: InboxDelivery): Promise<boolean> {
    if (this.beginAnswers.shift() === 'FAIL') throw new Error('connection refused');
    return this.handled.has(delivery.envelope.messageId);
  }

  async recordFailedAttempt(delivery: InboxDelivery, attempt: number): Promise<void> {
    this.failed.set(delivery.envelope.messageId, attempt);
  }

  async forgetFailedAttempts(delivery: InboxDelivery): Promise<void> {
    this.failed.delete(delivery.envelope.messageId);
  }

  count(counter: Map<string, number>, id: string): void {
    counter.set(id, (counter.get(id) ?? 0) + 1);
  }
}

/** A batch transaction in memory: what its deliveries handled becomes `handled` at the commit. */
export class FakeBatch {
  readonly staged: string[] = [];
  private readonly callbackLists: Array<Array<() => void>> = [];
  private aborted?: { readonly error: unknown; readonly seen: boolean };

  constructor(
    private readonly inbox: FakeInbox,
    private readonly ids: readonly string[],
  ) {}

  async run(
    index: number,
    work: (scope: { manager: never }, failedBefore: number) => Promise<void>,
    afterCommit: Array<() => void> = [],
  ): Promise<InboxOutcome> {
    const id = this.ids[index];
    if (this.inbox.handled.has(id)) return 'DUPLICATE';
    this.callbackLists.push(afterCommit);
    const manager: FakeManager = {
      batch: this,
      afterCommit,
      swallow: (error, seen = true) => void (this.aborted ??= { error, seen }),
    };
    try {
      await work({ manager: manager as never }, this.inbox.failed.get(id) ?? 0);
    } catch (error) {
      this.failedHere(id);
      throw error;
    }
    // As `OpenTransaction.within`: a transaction ended under a handler that returned fails that handler.
    if (this.aborted?.seen) {
      this.failedHere(id);
      throw new TransactionAbortedError(this.aborted.error);
    }
    this.staged.push(id);
    return 'HANDLED';
  }

  async commit(): Promise<void> {
    this.inbox.commits += 1;
    const answer = this.inbox.commitAnswers.shift() ?? 'OK';
    if (this.aborted || answer !== 'OK') {
      for (const id of this.staged) this.inbox.count(this.inbox.commitFailures, id);
    }
    // PostgreSQL answers COMMIT with ROLLBACK: nothing durable.
    if (this.aborted) throw new TransactionAbortedError(undefined);
    if (answer === 'FAIL') throw new Error('could not serialize access');
    for (const id of this.staged) {
      this.inbox.handled.add(id);
      this.inbox.applied.push(id);
      this.inbox.failed.delete(id);
      this.inbox.log.push(`applied:${id}`);
    }
    if (answer === 'LOST') throw new Error('Connection terminated unexpectedly');
    for (const callback of this.callbackLists.flat()) callback();
  }

  async rollback(): Promise<'rolled-back' | 'connection-lost'> {
    this.inbox.rollbacks += 1;
    for (const id of this.staged) this.inbox.count(this.inbox.neighbourRollbacks, id);
    this.staged.length = 0;
    return this.inbox.rollbackAnswers.shift() === 'BROKEN' ? 'connection-lost' : 'rolled-back';
  }

  private failedHere(id: string): void {
    this.inbox.count(this.inbox.ownFailures, id);
  }
}

export interface HarnessOptions {
  readonly capabilities?: TransportCapabilities;
  readonly policy?: RetryPolicyOptions;
  readonly retryDefaults?: Record<string, RetryPolicyOptions>;
  /** Fails the handler while this returns true (given the attempt). */
  readonly failWhile?: (attempt: number) => boolean;
  /** What the handler throws; default a transient failure. */
  readonly error?: () => Error;
  /** The inbox (and its attempt counts); a fresh one by default. */
  readonly inbox?: FakeInbox;
  /** `consumers.batchSize`. */
  readonly batchSize?: number;
  /** The pipeline's clock (its waits, backoffs and jitter); a fresh `FakeClock` by default. */
  readonly clock?: FakeClock;
  /** `consumers` options over the harness's (`batchSize` above wins). */
  readonly consumers?: MessagingModuleOptions['consumers'];
  /** The definition the handler takes; `OrderPlaced` by default. */
  readonly event?: EventDefinition<string, unknown>;
  /** The tenants the pipeline checks deliveries against (tenants on); none by default. */
  readonly tenants?: TenantRouting;
  /** Parks a tenant's deliveries while its database does not answer (tenants on); none by default. */
  readonly parking?: TenantParking;
}

/** A pipeline over a fake transport and inbox; the test scripts what the broker answers to copies. */
export class Harness {
  readonly registry = new HandlerRegistry();
  readonly calls: MessageContext[] = [];
  /** The payload of each handler call (beside `calls`). */
  readonly payloads: unknown[] = [];
  /** Called on each handler call (before it fails or not). */
  onCall?: (context: MessageContext) => void | Promise<void>;
  readonly transport: MessageTransport;
  readonly copies: WireMessage[] = [];
  /** Copies the broker confirmed, in order. */
  readonly confirmed: WireMessage[] = [];
  /** What the broker answers to each copy, in turn; CONFIRMED once the script runs out. */
  readonly answers: Array<PublishOutcome['status']> = [];
  keepAlives = 0;
  stopping = false;
  readonly inbox: FakeInbox;
  readonly pipeline: DeliveryPipeline;
  readonly metrics = new MessagingMetrics();
  /** The messages the pipeline holds (a version it cannot read yet). */
  readonly held: HeldMessages;
  /** Time and jitter of the pipeline: moves on `clock.advance`, `random()` is 0.5 unless set. */
  readonly clock: FakeClock;
  readonly control: DeliveryControl = {
    keepAlive: async () => void (this.keepAlives += 1),
    isStopping: () => this.stopping,
  };

  constructor(options: HarnessOptions = {}) {
    const transport = (this.transport = {
      kind: options.capabilities === RABBITMQ ? 'rabbitmq' : 'kafka',
      capabilities: options.capabilities ?? KAFKA,
      publishCopies: async (copies: readonly WireMessage[]): Promise<PublishOutcome[]> =>
        copies.map((copy) => {
          this.copies.push(copy);
          const status = this.answers.shift() ?? 'CONFIRMED';
          if (status === 'CONFIRMED') {
            this.confirmed.push(copy);
            this.inbox.log.push(`copy:${idOf(copy)}`);
          }
          return status === 'CONFIRMED' ? { status } : { status, error: new Error('refused') };
        }),
    } as unknown as MessageTransport);
    this.inbox = options.inbox ?? new FakeInbox();
    this.clock = options.clock ?? new FakeClock();
    const resolved = resolveMessagingOptions({
      serviceName: 'unit',
      transport: { kind: 'kafka', brokers: ['127.0.0.1:9092'] },
      retryDefaults: options.retryDefaults,
      consumers: { ...options.consumers, batchSize: options.batchSize },
      deadLetter: { keySecret: Buffer.alloc(32, 7).toString('base64') },
    });
    this.registry.add({
      group: GROUP,
      event: options.event ?? OrderPlaced,
      policy: options.policy && resolveRetryPolicy(options.policy),
      name: 'Orders.onOrderPlaced',
      invoke: async (payload, context) => {
        this.calls.push(context);
        this.payloads.push(payload);
        await this.onCall?.(context);
        if (options.failWhile?.(context.attempt)) throw options.error?.() ?? new Flaky('downstream flaked');
      },
    });
    const metrics = this.metrics;
    this.held = new HeldMessages(this.clock, resolved, metrics);
    this.pipeline = new DeliveryPipeline(
      this.registry,
      this.inbox as unknown as InboxService,
      new FailureSettler(
        transport,
        metrics,
        this.clock,
        resolved,
        this.inbox as unknown as InboxService,
        this.held,
      ),
      transport,
      resolved,
      metrics,
      new MessageTracing(),
      this.clock,
      options.tenants,
      options.parking,
    );
  }

  handleBatch(wires: readonly WireMessage[]): Promise<Settlement[]> {
    const deliveries = wires.map((wire): Delivery => ({ wire, origin: { source: wire.destination } }));
    return this.pipeline.handleBatch(GROUP, deliveries, this.control);
  }

  handle(wire: WireMessage, retryTierMs?: number): Promise<Settlement> {
    const delivery: Delivery = { wire, origin: { source: wire.destination, retryTierMs } };
    return this.pipeline.handle(GROUP, delivery, this.control);
  }

  /** The handler calls of message `id`. */
  callsOf(id: string): MessageContext[] {
    return this.calls.filter((c) => c.messageId === id);
  }

  /** Runs `work` to its end while the harness's clock moves in steps of `stepMs`. */
  async withTimePassing<T>(work: Promise<T>, stepMs = 100): Promise<T> {
    let done = false;
    const result = work.finally(() => (done = true));
    while (!done) await this.clock.advance(stepMs);
    return result;
  }
}
