export * from './consumer-orchestrator';
export * from './idempotent-handler.decorator';
export * from './message-context';
export * from './messaging.server';
