export * from './configure-http';
export * from './parse-id.pipe';
export * from './validation-errors';
