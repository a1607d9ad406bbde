export * from './configure-http';
export * from './json-body-guard';
export * from './max-characters.decorator';
export * from './parse-id.pipe';
export * from './validation-errors';
