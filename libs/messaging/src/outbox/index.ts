export * from './outbox-message.entity';
export * from './outbox-relay';
export * from './outbox-retention';
export * from './outbox.decorator';
export * from './outbox.service';
