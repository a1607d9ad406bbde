import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { EventDefinition, EventPayload } from '../envelope/event-definition';
import { isMessageId, newMessageId } from '../envelope/message-id';
import { NoActiveTransactionError } from '../errors/no-active-transaction.error';
import { OutboxPayloadInvalidError } from '../errors/outbox-payload-invalid.error';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS } from '../messaging.constants';
import { currentTraceHeaders } from '../observability/trace-context';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { TransactionHost } from '../transaction/transaction-host';
import { TransactionScope } from '../transaction/transaction-scope';
import { LogicalMessageWriter } from './logical/logical-message-writer';
import { NewOutboxRow } from './outbox-row';
import { OutboxStore } from './outbox-store';
import { RelayWakeup } from './relay-wakeup';

/** Options of one `OutboxService.add()`. */
export interface AddMessageOptions {
  /**
   * Your own message id (any UUID), e.g. to make a retried request idempotent. Default: a new UUIDv7. The
   * polling relay's outbox refuses an id it holds already (a unique index); with `relay.mode: 'logical'` there
   * is no row to check against, so both messages go out and the consumers' inbox handles the id once.
   */
  messageId?: string;
  /** Extra headers. Names starting with `msg.` are reserved and refused. */
  headers?: Record<string, string>;
  /** When the fact happened. Default: now. */
  occurredAt?: Date;
}

/** Records messages in the outbox, in the caller's transaction. */
@Injectable()
export class OutboxService {
  private readonly notified = new WeakSet<TransactionScope>();

  /** @internal Created by Nest; inject it. */
  constructor(
    private readonly transactions: TransactionHost,
    private readonly store: OutboxStore,
    private readonly wakeup: RelayWakeup,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly logical: LogicalMessageWriter,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Records `payload` as an `event` message in the current transaction (see `@Outbox()`); it is published
   * after the commit, and never if the transaction rolls back. Returns the message id. Polling relay: an
   * outbox row; `relay.mode: 'logical'`: a transactional message in PostgreSQL's log (no row).
   */
  async add<TEvent extends EventDefinition<string, unknown>>(
    event: TEvent,
    payload: EventPayload<TEvent>,
    options: AddMessageOptions = {},
  ): Promise<string> {
    const scope = this.transactions.currentScope();
    if (!scope) throw new NoActiveTransactionError(`OutboxService.add(${event.type})`);

    const parsed = event.schema.safeParse(payload);
    if (!parsed.success) {
      throw new OutboxPayloadInvalidError(
        event.type,
        parsed.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`),
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
      headers,
      payloadJson: JSON.stringify(parsed.data),
      occurredAt: options.occurredAt ?? new Date(this.clock.now()),
    };
    // Logical mode: the message goes into the log with the commit; the slot's reader is woken by PostgreSQL.
    if (this.options.relay.mode === 'logical') {
      await this.logical.write(scope.queryRunner, row);
      return messageId;
    }
    await this.store.insert(scope.queryRunner, [row]);
    if (!this.notified.has(scope)) {
      this.notified.add(scope);
      if (this.options.relay.notify) await this.store.notify(scope.queryRunner);
      scope.afterCommit.push(() => this.wakeup.fire());
    }
    return messageId;
  }
}
