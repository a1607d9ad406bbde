import { createHash } from 'node:crypto';
import { Injectable, Optional } from '@nestjs/common';
import { TransactionHost } from '../transaction/transaction-host';
import { TransactionScope } from '../transaction/transaction-scope';
import { InboxBatch, InboxEntry } from './inbox-batch';
import { InboxDelivery } from './inbox-delivery';
import { InboxKey, InboxStore } from './inbox-store';
import { InboxUnreachableError } from './inbox-unreachable.error';
import { TenantRouting } from '../transaction/tenant-routing';
import { UnknownTenantError } from '../errors/unknown-tenant.error';

export type { InboxDelivery, InboxOutcome, InboxWork } from './inbox-delivery';

/**
 * Runs a handler at most once per (consumer group, message id), in the transaction that records it, and
 * counts attempts retried in place.
 */
@Injectable()
export class InboxService {
  constructor(
    private readonly transactions: TransactionHost,
    private readonly store: InboxStore,
    @Optional() private readonly tenants?: TenantRouting<unknown, InboxService>,
  ) {}

  /**
   * Begins a transaction for one or several deliveries of distinct messages and records them all at once:
   * HANDLED for each recorded now (its work is still to run), else a DUPLICATE, or a CONFLICT when the
   * payload differs from the one handled under that id (the caller dead-letters it, so that it does not
   * disappear). The caller runs their work (`InboxBatch`), then commits or rolls it back; work that throws
   * rolls back the record too, so the message can be tried again. Throwing, nothing was begun: an
   * `InboxUnreachableError` when the transaction itself could not begin (the database away).
   */
  async begin(deliveries: readonly InboxDelivery[]): Promise<InboxBatch> {
    const ids = new Set(deliveries.map((d) => `${d.group}/${d.envelope.messageId}`));
    if (ids.size !== deliveries.length) throw new Error('an inbox batch holds each message once');
    const tenant = deliveries[0]?.tenant;
    if (deliveries.some((d) => d.tenant !== tenant)) throw new Error('an inbox batch holds one tenant');
    // A tenant's message: its inbox, its transaction, its database (and no other).
    const own = this.tenantInbox(tenant, true);
    if (own) return own.begin(deliveries);
    const transaction = await this.transactions.begin().catch((error: unknown) => {
      throw new InboxUnreachableError(error);
    });
    try {
      return new InboxBatch(
        transaction,
        await transaction.within(() => this.record(transaction.scope, deliveries)),
      );
    } catch (error) {
      await transaction.rollback();
      throw error;
    }
  }

  /**
   * Records the deliveries in the scope's transaction: HANDLED for each recorded now (its work is still to
   * run; its failed attempts are forgotten in the same transaction), else DUPLICATE or CONFLICT.
   */
  private async record(scope: TransactionScope, deliveries: readonly InboxDelivery[]): Promise<InboxEntry[]> {
    const records = deliveries.map((delivery) => ({
      ...keyOf(delivery),
      type: delivery.envelope.type,
      payloadHash: createHash('sha256').update(delivery.body).digest('hex'),
    }));
    const recorded = await this.store.tryRecordAll(scope.queryRunner, records);
    const entries: InboxEntry[] = [];
    for (const [i, record] of records.entries()) {
      const { failedBefore } = recorded[i];
      if (failedBefore > 0) await this.store.forgetFailedAttempts(record, scope.queryRunner);
      if (recorded[i].recorded) {
        entries.push({ outcome: 'HANDLED', failedBefore });
        continue;
      }
      const firstHash = await this.store.recordedHash(scope.queryRunner, record.group, record.messageId);
      const conflict = firstHash !== undefined && firstHash !== record.payloadHash;
      entries.push({ outcome: conflict ? 'CONFLICT' : 'DUPLICATE', failedBefore });
    }
    return entries;
  }

  /**
   * True when the inbox holds the message for its group: a try of it committed (one whose commit answer was
   * lost, say). It asks by trying the record's insert in a transaction it rolls back: an insert waits for a
   * transaction still committing the same record (a plain read would not see it yet, and say no). Throws
   * when the database does not answer.
   */
  async holds(delivery: InboxDelivery): Promise<boolean> {
    const own = this.tenantInbox(delivery.tenant);
    if (own) return own.holds(delivery);
    const transaction = await this.transactions.begin();
    try {
      const [probe] = await this.store.tryRecordAll(transaction.scope.queryRunner, [
        { ...keyOf(delivery), type: delivery.envelope.type, payloadHash: '0'.repeat(64) },
      ]);
      return !probe.recorded;
    } finally {
      await transaction.rollback();
    }
  }

  /** Remembers that the message's delivery number `attempt` failed and is retried in place. */
  async recordFailedAttempt(delivery: InboxDelivery, attempt: number): Promise<void> {
    const own = this.tenantInbox(delivery.tenant);
    if (own) return own.recordFailedAttempt(delivery, attempt);
    return this.store.recordFailedAttempts(keyOf(delivery), attempt);
  }

  /** Forgets the message's failed attempts once it left the destination (dead-lettered, dropped, retried elsewhere). */
  async forgetFailedAttempts(delivery: InboxDelivery): Promise<void> {
    const own = this.tenantInbox(delivery.tenant);
    if (own) return own.forgetFailedAttempts(delivery);
    return this.store.forgetFailedAttempts(keyOf(delivery));
  }

  /**
   * The module's inbox hands a tenant's message to the inbox of that tenant's database (undefined: this is
   * that inbox, or tenants are off). A tenant removed since its message was admitted: an `UnknownTenantError`,
   * as an `InboxUnreachableError` for `begin` (the consumer waits, and never writes elsewhere).
   */
  private tenantInbox(tenant: string | undefined, beginning = false): InboxService | undefined {
    if (tenant === undefined || !this.tenants) return undefined;
    const inbox = this.tenants.inbox(tenant);
    if (inbox) return inbox;
    const error = new UnknownTenantError(tenant, 'the inbox');
    throw beginning ? new InboxUnreachableError(error) : error;
  }
}

function keyOf({ group, envelope, redriveId }: InboxDelivery): InboxKey {
  return { group, messageId: envelope.messageId, redriveId };
}
