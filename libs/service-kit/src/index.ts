/**
 * What the demo services share that is not messaging: configuration from the environment, the HTTP edge,
 * health and metrics endpoints, migration helpers and startup errors.
 */
export * from './config';
export * from './database';
export * from './http';
export * from './operations';
export * from './startup';
