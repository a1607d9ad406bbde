export * from './qualified-table';
export * from './service-typeorm-options';
