import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../transaction/transaction-host';
import { TransactionScope } from '../transaction/transaction-scope';
import { InboxBatch } from './inbox-batch';
import { InboxDelivery, InboxOutcome, InboxWork } from './inbox-delivery';
import { InboxKey, InboxStore } from './inbox-store';

export type { InboxDelivery, InboxOutcome, InboxWork } from './inbox-delivery';

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
