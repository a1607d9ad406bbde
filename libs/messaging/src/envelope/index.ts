export * from './envelope-codec';
export * from './event-definition';
export * from '../errors/failure-category';
export * from './message-envelope';
export * from './message-headers';
export * from './message-id';
export * from './wire-message';
