export type { BulkItemStatus, StoredBulkItem } from './bulk-chunks';
export type { BulkExecutionOptions, BulkProgress, BulkRedriveResult } from './bulk-executor';
export { PostgresBulkPlanStore, type BulkCounts, type BulkPlanStore, type BulkRun } from './bulk-plan-store';
export type { BulkPlanRequest } from './bulk-planner';
export { bulkDigest, type BulkItem, type BulkRole, type BulkSelection } from './bulk-selection';
