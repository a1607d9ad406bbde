export * from './message-tracing';
export * from './messaging-health.indicator';
export * from './messaging-metrics';
