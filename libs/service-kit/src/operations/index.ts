export * from './health.controller';
export * from './metrics.controller';
export * from './operations.module';
