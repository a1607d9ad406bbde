/** The public API of the messaging library. */
export * from './consumers';
export * from './envelope';
export * from './errors';
export { InboxRecordEntity } from './inbox/inbox-record.entity';
export { MessagingMigrations, CreateMessagingTables1764547200000 } from './migrations';
export { MESSAGING_TRANSPORT } from './messaging.constants';
export * from './messaging-options.interface';
export { MessagingModule } from './messaging.module';
export * from './observability';
export * from './outbox';
export * from './retry';
export { RetryPolicy } from './retry/retry-policy.decorator';
export * from './transaction';
export * from './transports';

import { InboxRecordEntity } from './inbox/inbox-record.entity';
import { OutboxMessageEntity } from './outbox/outbox-message.entity';

/** The library's TypeORM entities, for `entities: [...]` if you want to query its tables. */
export const MessagingEntities = [OutboxMessageEntity, InboxRecordEntity];
export * from './dead-letter/redrive';
