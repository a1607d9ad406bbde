import { Inject, Injectable, Optional } from '@nestjs/common';
import { Clock } from '../common/clock';
import { EventDefinition, EventPayload } from '../envelope/event-definition';
import { eventVersionHeader } from '../envelope/event-version';
import { isMessageId, newMessageId } from '../envelope/message-id';
import { DuplicateMessageIdError } from '../errors/duplicate-message-id.error';
import { InvalidScheduleError } from '../errors/invalid-schedule.error';
import { NoActiveTransactionError } from '../errors/no-active-transaction.error';
import { OutboxPayloadInvalidError } from '../errors/outbox-payload-invalid.error';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS } from '../messaging.constants';
import { currentTraceHeaders } from '../observability/trace-context';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { TransactionHost } from '../transaction/transaction-host';
import { TransactionScope } from '../transaction/transaction-scope';
import { CancelResult } from './cancel-result';
import { isUniqueViolation } from './duplicate-key';
import { unparkableContent } from './logical/logical-content-limits';
import { LogicalMessageWriter } from './logical/logical-message-writer';
import { NewOutboxRow } from './outbox-row';
import { OutboxStore } from './outbox-store';
import { RelayWakeup } from './relay-wakeup';
import { resolveSchedule } from './schedule';
import { TenantRouting } from '../transaction/tenant-routing';

/** Options of one `OutboxService.add()`. */
export interface AddMessageOptions {
  /**
   * Your own message id (any UUID), e.g. to make a retried request idempotent. Default: a new UUIDv7. An id
   * the outbox holds already (pending, or sent and kept) is refused with `DuplicateMessageIdError`, and so is a
   * scheduled message's id that waits or that the outbox holds; with `relay.mode: 'logical'` an unscheduled
   * message has no row to check against, so both messages go out and the consumers' inbox handles the id once.
   */
  messageId?: string;
  /** Extra headers. Names starting with `msg.` are reserved and refused. */
  headers?: Record<string, string>;
  /** When the fact happened. Default: now. */
  occurredAt?: Date;
  /**
   * Deliver at (or after) this time, compared with the database's clock; a time not in the future means now.
   * Not with `delayMs`. See the guide's "Scheduled messages" for the order it keeps with its key's messages.
   * Not in `relay.mode: 'external'`.
   */
  deliverAt?: Date;
  /**
   * Deliver this many milliseconds after the insert (the database's clock), at the earliest: a finite number,
   * 0 or more (0: now), at most about ten years. Not with `deliverAt`.
   */
  delayMs?: number;
}

/**
 * Records messages in the outbox, in the caller's transaction. With tenants on, in the current tenant's
 * outbox (`MessagingTenants.run()`), in that tenant's transaction; no tenant is a `TenantRequiredError`, an
 * unregistered one an `UnknownTenantError`: never a write to another database.
 */
@Injectable()
export class OutboxService {
  private readonly notified = new WeakSet<TransactionScope>();
  private readonly scheduledIn = new WeakSet<TransactionScope>();

  /** @internal Created by Nest; inject it. */
  constructor(
    private readonly transactions: TransactionHost,
    private readonly store: OutboxStore,
    private readonly wakeup: RelayWakeup,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly logical: LogicalMessageWriter,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
    @Optional() private readonly tenants?: TenantRouting<OutboxService>,
  ) {}

  /**
   * Records `payload` as an `event` message in the current transaction (see `@Outbox()`); it is published
   * after the commit, and never if the transaction rolls back. Returns the message id. Polling relay: an
   * outbox row; `relay.mode: 'logical'`: a transactional message in PostgreSQL's log (no row); `'external'`:
   * an outbox row marked sent, which Debezium publishes from the log.
   */
  async add<TEvent extends EventDefinition<string, unknown>>(
    event: TEvent,
    payload: EventPayload<TEvent>,
    options: AddMessageOptions = {},
  ): Promise<string> {
    if (this.tenants?.enabled) {
      return this.tenants.outbox(`OutboxService.add(${event.type})`).add(event, payload, options);
    }
    const scope = this.transactions.currentScope();
    if (!scope) throw new NoActiveTransactionError(`OutboxService.add(${event.type})`);

    const parsed = event.schema.safeParse(payload);
    if (!parsed.success) {
      throw new OutboxPayloadInvalidError(
        event.type,
        parsed.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`),
      );
    }
    const schedule = resolveSchedule(event.type, options, this.clock.now());
    if (schedule && this.options.relay.mode === 'external') {
      throw new InvalidScheduleError(
        event.type,
        "relay.mode 'external' publishes every row from the database's log as it is written (Debezium): " +
          'it cannot hold a message back. Schedule with the polling or the logical relay.',
      );
    }
    const messageId = options.messageId ?? newMessageId();
    if (!isMessageId(messageId))
      throw new TypeError(`messageId must be a UUID, got '${String(options.messageId)}'.`);
    const headers = { ...options.headers, ...currentTraceHeaders() };
    const reserved = Object.keys(headers).find((name) => name.startsWith('msg.'));
    if (reserved)
      throw new TypeError(`Header '${reserved}' is reserved for the library (names starting with 'msg.').`);

    const row: NewOutboxRow = {
      messageId,
      destination: event.destination,
      type: event.type,
      key: event.key(parsed.data),
      headers: { ...headers, ...eventVersionHeader(event.version) }, // the relay's encodeEnvelope keeps it
      payloadJson: JSON.stringify(parsed.data),
      occurredAt: options.occurredAt ?? new Date(this.clock.now()),
    };
    if (schedule) {
      // Both relays: the message waits in the table of scheduled messages; when it is due the polling relay
      // (which runs beside the logical one) moves it into the outbox and publishes it.
      if (this.options.relay.mode === 'logical') {
        const problems = unparkableContent(row);
        if (problems.length > 0) throw new OutboxPayloadInvalidError(event.type, problems);
      }
      if (!(await this.store.insertScheduled(scope.queryRunner, row, schedule))) {
        throw new DuplicateMessageIdError(messageId, event.type);
      }
      if (!this.scheduledIn.has(scope)) {
        this.scheduledIn.add(scope);
        scope.afterCommit.push(() => this.wakeup.fire({ scheduled: true }));
      }
      return messageId;
    }
    // Logical mode: the message goes into the log with the commit; the slot's reader is woken by PostgreSQL.
    if (this.options.relay.mode === 'logical') {
      // What the outbox table would refuse could never be parked: refused here, as poll mode's insert does.
      const problems = unparkableContent(row);
      if (problems.length > 0) throw new OutboxPayloadInvalidError(event.type, problems);
      await this.logical.write(scope.queryRunner, row);
      return messageId;
    }
    try {
      await this.store.insert(scope.queryRunner, [row]);
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateMessageIdError(messageId, event.type, error);
      throw error;
    }
    // External mode: Debezium reads the row from the log; no relay of ours is woken for it.
    if (this.options.relay.mode === 'external') return messageId;
    if (!this.notified.has(scope)) {
      this.notified.add(scope);
      if (this.options.relay.notify) await this.store.notify(scope.queryRunner);
      scope.afterCommit.push(() => this.wakeup.fire());
    }
    return messageId;
  }

  /**
   * Cancels a scheduled message (`add(…, { deliverAt | delayMs })`) in the current transaction:
   * `{ cancelled: true }` when it was waiting and will now never be published (once the transaction commits);
   * otherwise `{ cancelled: false, reason }`: `'pending'` (in the outbox: it came due, or was never scheduled;
   * it will be published), `'sent'` (published, its row kept), `'not-found'` (unknown, cancelled already, or
   * published and its row deleted). A relay moving it at that moment is waited for, so `cancelled: true`
   * never races a publish.
   */
  async cancel(messageId: string): Promise<CancelResult> {
    if (this.tenants?.enabled) return this.tenants.outbox('OutboxService.cancel()').cancel(messageId);
    const scope = this.transactions.currentScope();
    if (!scope) throw new NoActiveTransactionError('OutboxService.cancel()');
    if (!isMessageId(messageId)) throw new TypeError(`messageId must be a UUID, got '${String(messageId)}'.`);
    if (await this.store.cancelScheduled(scope.queryRunner, messageId)) return { cancelled: true };
    const state = await this.store.outboxStateOf(scope.queryRunner, messageId);
    return { cancelled: false, reason: state ?? 'not-found' };
  }
}
