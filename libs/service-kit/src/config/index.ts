export * from './invalid-environment.error';
export * from './service-environment';
