import { Injectable, Type } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Column, Entity, PrimaryGeneratedColumn, Repository } from 'typeorm';
import {
  FailureCategory,
  IdempotentHandler,
  MessageContext,
  MessageHandlingError,
  RetryPolicy,
  RetryPolicyOptions,
} from 'nest-reliable-messaging';
import { OrderPlacedEvent, orderPlacedSchema } from './orders.fixture';
import { z } from 'zod';

/** What a consumer fixture wrote, in the handler's transaction. */
@Entity({ name: 'handled_orders' })
export class HandledOrder {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'message_id', type: 'uuid' })
  messageId!: string;

  @Column({ type: 'text' })
  customer!: string;

  @Column({ type: 'integer', nullable: true })
  seq!: number | null;

  @Column({ type: 'integer' })
  attempt!: number;

  @Column({ name: 'consumer_group', type: 'text' })
  group!: string;
}

/** A test error the classifier sees as TRANSIENT. */
export class FlakyDownstreamError extends Error {
  readonly retriable = true;
  constructor() {
    super('downstream flaked');
    this.name = 'FlakyDownstreamError';
  }
}

/** Steers and observes a consumer fixture from the test. */
export class ConsumerProbe {
  invocations = 0;
  /** seq → fail (after writing) while the attempt is below this number. */
  readonly failUntilAttempt = new Map<number, number>();
  readonly alwaysFail = new Set<number>();
  /** seq → fail with a non-retryable error (AUTHORIZATION), every time. */
  readonly refuse = new Set<number>();
  /** seq → the error to fail with on an attempt (after writing), or undefined to succeed. */
  readonly failWith = new Map<number, (attempt: number) => Error | undefined>();
  /** When each invocation began (`Date.now()`), beside `contexts`. */
  readonly invokedAt: number[] = [];
  delayMs = 0;
  readonly contexts: MessageContext[] = [];
  /** Each invocation's `seq` (beside `contexts`, in the same order). */
  readonly seqs: Array<number | undefined> = [];
  /** The contexts the handler was called with for message `seq`, in order. */
  contextsOf(seq: number): MessageContext[] {
    return this.contexts.filter((_, i) => this.seqs[i] === seq);
  }
  /** The attempts the handler was called with for message `seq`, in order. */
  attemptsOf(seq: number): number[] {
    return this.contextsOf(seq).map((c) => c.attempt);
  }
  /** The time from message `seq`'s attempt `n` to its attempt `n + 1`, ms. */
  gapAfterAttempt(seq: number, n: number): number {
    const times = this.invokedAt.filter((_, i) => this.seqs[i] === seq);
    const attempts = this.attemptsOf(seq);
    return times[attempts.indexOf(n + 1)] - times[attempts.indexOf(n)];
  }
  /** Called on every invocation, before the handler writes or fails. */
  onInvocation?: (context: MessageContext) => void;
}

type OrderPayload = z.output<typeof orderPlacedSchema>;

/** A consumer of `event` in `group`, defined per suite (decorators take the suite's own destination). */
export function ordersConsumer(event: OrderPlacedEvent, group: string, policy?: RetryPolicyOptions): Type {
  const maybePolicy: MethodDecorator = policy ? RetryPolicy(policy) : () => undefined;

  @Injectable()
  class OrdersConsumer {
    constructor(
      @InjectRepository(HandledOrder) private readonly handled: Repository<HandledOrder>,
      private readonly probe: ConsumerProbe,
    ) {}

    @IdempotentHandler(event, { group })
    @maybePolicy
    async onOrderPlaced(order: OrderPayload, context: MessageContext): Promise<void> {
      this.probe.invocations += 1;
      this.probe.invokedAt.push(Date.now());
      this.probe.contexts.push(context);
      this.probe.seqs.push(order.seq);
      this.probe.onInvocation?.(context);
      if (this.probe.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.probe.delayMs));
      await this.handled.save(
        this.handled.create({
          messageId: context.messageId,
          customer: order.customer,
          seq: order.seq ?? null,
          attempt: context.attempt,
          group: context.group,
        }),
      );
      const seq = order.seq ?? -1;
      const failure = this.probe.failWith.get(seq)?.(context.attempt);
      if (failure !== undefined) throw failure;
      if (this.probe.refuse.has(seq))
        throw new MessageHandlingError(FailureCategory.AUTHORIZATION, 'FORBIDDEN');
      if (this.probe.alwaysFail.has(seq)) throw new FlakyDownstreamError();
      if (context.attempt < (this.probe.failUntilAttempt.get(seq) ?? 0)) throw new FlakyDownstreamError();
    }
  }
  return OrdersConsumer;
}

/** `{ seq, attempt }` of every order `group` handled, in the order they were handled. */
export function handledOrders(
  database: { query<R extends object>(sql: string, params?: unknown[]): Promise<R[]> },
  group: string,
): Promise<Array<{ seq: number; attempt: number }>> {
  return database.query<{ seq: number; attempt: number }>(
    'select seq, attempt from handled_orders where consumer_group = $1 order by id',
    [group],
  );
}
