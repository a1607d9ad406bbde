export * from './transaction-host';
