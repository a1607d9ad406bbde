import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { MessageEnvelope } from '../envelope/message-envelope';
import { TransactionHost } from '../transaction/transaction-host';
import { TransactionScope } from '../transaction/transaction-scope';
import { InboxBatch } from './inbox-batch';
import { InboxKey, InboxStore } from './inbox-store';

/**
 * What happened to a delivery in the inbox: handled now; a duplicate of one handled before (same id, same
 * payload); or a different message reusing a handled message's id (CONFLICT: not handled).
 */
export type InboxOutcome = 'HANDLED' | 'DUPLICATE' | 'CONFLICT';

/** A delivery as the inbox sees it. */
export interface InboxDelivery {
  readonly group: string;
  readonly envelope: MessageEnvelope;
  readonly body: Buffer;
  /** `msg.redrive-id` of a redriven copy, else empty: a redriven message counts its attempts afresh. */
  readonly redriveId: string;
}

/** A handler's work for one delivery, told how many deliveries of the message failed in place before. */
export type InboxWork = (scope: TransactionScope, failedBefore: number) => Promise<void>;

/** Runs a handler at most once per (consumer group, message id), and counts attempts retried in place. */
@Injectable()
export class InboxService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly store: InboxStore,
  ) {}

  /**
   * In one transaction: records the message for the group and runs `work` (told how many deliveries of the
   * message failed in place before), or, when the record exists, does nothing: a DUPLICATE, or a CONFLICT
   * when the payload differs from the one handled under that id (the caller dead-letters it, so that it does
   * not disappear). `work` throwing rolls both back, so the message can be tried again. A message handled
   * after failed attempts forgets them in the same transaction.
   */
  async runOnce(delivery: InboxDelivery, work: InboxWork): Promise<InboxOutcome> {
    return this.transactions.run(() =>
      this.recordAndRun(this.transactions.currentScope() as TransactionScope, delivery, work),
    );
  }

  /**
   * Begins a transaction for several deliveries, each in a savepoint of its own (see `InboxBatch`); the
   * caller commits or rolls it back.
   */
  async begin(): Promise<InboxBatch> {
    return new InboxBatch(await this.transactions.begin(), (scope, delivery, work, savepoint) =>
      this.recordAndRun(scope, delivery, work, savepoint),
    );
  }

  private async recordAndRun(
    scope: TransactionScope,
    delivery: InboxDelivery,
    work: InboxWork,
    savepoint?: string,
  ): Promise<InboxOutcome> {
    const { group, envelope } = delivery;
    const payloadHash = createHash('sha256').update(delivery.body).digest('hex');
    const key = keyOf(delivery);
    const record = { ...key, type: envelope.type, payloadHash };
    const { recorded, failedBefore } = await this.store.tryRecord(scope.queryRunner, record, savepoint);
    if (failedBefore > 0) await this.store.forgetFailedAttempts(key, scope.queryRunner);
    if (!recorded) {
      const firstHash = await this.store.recordedHash(scope.queryRunner, group, envelope.messageId);
      return firstHash !== undefined && firstHash !== payloadHash ? 'CONFLICT' : 'DUPLICATE';
    }
    await work(scope, failedBefore);
    return 'HANDLED';
  }

  /** Remembers that the message's delivery number `attempt` failed and is retried in place. */
  recordFailedAttempt(delivery: InboxDelivery, attempt: number): Promise<void> {
    return this.store.recordFailedAttempts(keyOf(delivery), attempt);
  }

  /** Forgets the message's failed attempts once it left the destination (dead-lettered, dropped, retried elsewhere). */
  forgetFailedAttempts(delivery: InboxDelivery): Promise<void> {
    return this.store.forgetFailedAttempts(keyOf(delivery));
  }
}

function keyOf({ group, envelope, redriveId }: InboxDelivery): InboxKey {
  return { group, messageId: envelope.messageId, redriveId };
}
