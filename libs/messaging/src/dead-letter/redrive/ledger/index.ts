export * from './postgres-redrive-ledger';
export * from './redrive-ledger.interface';
