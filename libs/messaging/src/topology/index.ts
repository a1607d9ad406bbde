export * from './apply-topology';
export * from './messaging-topology';
export * from './messaging-topology-missing.error';
