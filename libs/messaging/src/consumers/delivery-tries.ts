import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { TransactionAbortedError } from '../errors/transaction-aborted.error';
import { InboxBatch } from '../inbox/inbox-batch';
import { InboxOutcome, InboxService } from '../inbox/inbox.service';
import { InboxUnreachableError } from '../inbox/inbox-unreachable.error';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { MessageTransport } from '../transports/message-transport.interface';
import { errorLine, messageContext } from './delivery-description';
import { ReadyDelivery, RunState, Tried } from './run-state';

/**
 * Tries of ready deliveries, each try one database transaction: the inbox records, then each handler (in a
 * trace span), then one commit; and the after-commit callbacks of tries whose commit answer was lost. What
 * a try's outcome means for the delivery is the pipeline's; a failure goes to the failure path.
 */
export class DeliveryTries {
  constructor(
    private readonly inbox: InboxService,
    private readonly tracing: MessageTracing,
    private readonly transportKind: MessageTransport['kind'],
    private readonly metrics: MessagingMetrics,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * One try of deliveries in one transaction: committed (with each one's outcome), failed at one of them
   * (rolled back whole), unreachable (the transaction could not begin), broken (its connection broke under a
   * handler: the rollback could not be sent), or lost: recording them failed, or
   * the commit failed (not durable, or the answer was lost and nobody knows: the callbacks of each
   * delivery's try are kept as unconfirmed).
   */
  async together(together: readonly ReadyDelivery[]): Promise<Tried> {
    let batch: InboxBatch;
    try {
      batch = await this.inbox.begin(together.map(({ state }) => state.inboxDelivery));
    } catch (error) {
      if (error instanceof InboxUnreachableError) return { kind: 'UNREACHABLE', error: error.cause };
      return { kind: 'LOST', atCommit: false, error }; // each fails alone, logged there
    }
    const outcomes: InboxOutcome[] = [];
    for (const [at, { state }] of together.entries()) {
      try {
        outcomes.push(await this.once(state, batch, at));
      } catch (error) {
        // A broken connection: the database went away under the handler (its error is likely that).
        if ((await batch.rollback()) === 'connection-lost') return { kind: 'BROKEN', at, error };
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

  /** One try: the inbox record and the handler, in the transaction of `batch` (its delivery number `at`). */
  private once(state: RunState, batch: InboxBatch, at: number): Promise<InboxOutcome> {
    const { group, delivery, envelope, handler, payload, labels } = state;
    const spanAttributes = {
      'messaging.consumer.group.name': group,
      'messaging.destination.partition.id': delivery.origin.partition?.toString() ?? '',
      'messaging.kafka.offset': delivery.origin.offset ?? '',
      'messaging.message.attempt': state.attempt,
    };
    const callbacks: Array<() => void> = (state.tryCallbacks = []);
    return this.tracing.process(this.transportKind, delivery.wire, spanAttributes, () =>
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
            messageContext(
              group,
              delivery,
              envelope,
              state.attempt,
              scope.manager,
              state.inboxDelivery.tenant,
            ),
          );
        },
        callbacks,
      ),
    );
  }

  /** Runs after-commit callbacks of a commit that did happen; one that throws is logged, the others run. */
  runCallbacks(callbacks: ReadonlyArray<() => void>): void {
    for (const callback of callbacks) {
      try {
        callback();
      } catch (error) {
        this.logger.error(`An after-commit callback failed: ${errorLine(error)}`);
      }
    }
  }
}
