import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { MessageEnvelope } from '../envelope/message-envelope';
import { TransactionHost } from '../transaction/transaction-host';
import { TransactionScope } from '../transaction/transaction-scope';
import { InboxStore } from './inbox-store';

/** What happened to a delivery in the inbox. */
export type InboxOutcome = 'HANDLED' | 'DUPLICATE';

/** Runs a handler at most once per (consumer group, message id). */
@Injectable()
export class InboxService {
  private readonly logger = new Logger(InboxService.name);

  constructor(
    private readonly transactions: TransactionHost,
    private readonly store: InboxStore,
  ) {}

  /**
   * In one transaction: records the message for the group and runs `work`, or, when the record exists,
   * does nothing (a duplicate; a different payload under the same id is logged). `work` throwing rolls
   * both back, so the message can be tried again.
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
        if (firstHash !== undefined && firstHash !== payloadHash) {
          this.logger.warn(
            `Duplicate message ${envelope.messageId} (${envelope.type} on ${envelope.destination}, group ${group}) ` +
              'carries a different payload than the one handled first; the first is kept, this one skipped.',
          );
        }
        return 'DUPLICATE';
      }
      await work(scope);
      return 'HANDLED';
    });
  }
}
