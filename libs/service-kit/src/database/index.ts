export * from './qualified-table';
