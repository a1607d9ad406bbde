import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { MessageEnvelope } from '../envelope/message-envelope';
import { TransactionHost } from '../transaction/transaction-host';
import { TransactionScope } from '../transaction/transaction-scope';
import { InboxStore } from './inbox-store';

/**
 * What happened to a delivery in the inbox: handled now; a duplicate of one handled before (same id, same
 * payload); or a different message reusing a handled message's id (CONFLICT: not handled).
 */
export type InboxOutcome = 'HANDLED' | 'DUPLICATE' | 'CONFLICT';

/** Runs a handler at most once per (consumer group, message id). */
@Injectable()
export class InboxService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly store: InboxStore,
  ) {}

  /**
   * In one transaction: records the message for the group and runs `work`, or, when the record exists,
   * does nothing: a DUPLICATE, or a CONFLICT when the payload differs from the one handled under that id
   * (the caller dead-letters it, so that it does not disappear). `work` throwing rolls both back, so the
   * message can be tried again.
   */
  async runOnce(
    group: string,
    envelope: MessageEnvelope,
    body: Buffer,
    work: (scope: TransactionScope) => Promise<void>,
  ): Promise<InboxOutcome> {
    const payloadHash = createHash('sha256').update(body).digest('hex');
    return this.transactions.run(async () => {
      const scope = this.transactions.currentScope() as TransactionScope;
      const recorded = await this.store.tryRecord(scope.queryRunner, {
        group,
        messageId: envelope.messageId,
        type: envelope.type,
        payloadHash,
      });
      if (!recorded) {
        const firstHash = await this.store.recordedHash(scope.queryRunner, group, envelope.messageId);
        return firstHash !== undefined && firstHash !== payloadHash ? 'CONFLICT' : 'DUPLICATE';
      }
      await work(scope);
      return 'HANDLED';
    });
  }
}
