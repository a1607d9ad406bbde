export * from './messaging-metrics';
