export type { AuditChainBreak, AuditChainCheck } from './audit-chain';
export * from './postgres-redrive-ledger';
export * from './redrive-ledger.interface';
