/** The public API of the messaging library. */
import { InboxRecordEntity } from './inbox/inbox-record.entity';
import { OutboxMessageEntity } from './outbox/outbox-message.entity';

export * from './consumers';
export * from './dead-letter/redrive';
export * from './envelope';
export * from './errors';
export { InboxRecordEntity } from './inbox/inbox-record.entity';
export { MESSAGING_TRANSPORT } from './messaging.constants';
export * from './messaging-options.interface';
export { MessagingModule } from './messaging.module';
export * from './migrations';
export * from './observability';
export * from './outbox';
export * from './retry';
export * from './topology';
export { RetryPolicy } from './retry/retry-policy.decorator';
export * from './transaction';
export * from './transports';

/** The library's TypeORM entities, for `entities: [...]` if you want to query its tables. */
export const MessagingEntities = [OutboxMessageEntity, InboxRecordEntity];
