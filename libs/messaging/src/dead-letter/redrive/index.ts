export * from './admin-connection';
export { ApproverKeyring } from './approvals/approver-keyring';
export {
  generateApproverKeys,
  readApproverSigner,
  type ApproverPrivateKeyFile,
  type ApproverPublicKey,
  type ApproverSigner,
} from './approvals/approver-keys';
export type { ApprovedRedrivePlan } from './approved-redrive-plan';
export * from './errors';
export type {
  DeadLetterPayload,
  InspectedDeadLetter,
  InspectedDeadLetterWithPayload,
} from './inspected-dead-letter';
export * from './issue-approval';
export * from './ledger';
export type { ApprovalGrant, RedriveApproval } from './redrive-approval';
export { RedriveHeaders } from './redrive-headers';
export { RedriveLimits } from './redrive-limits';
export type { MessagePosition, PlannedMessage, RedrivePlan } from './redrive-plan';
export { parseRedriveApproval, parseRedrivePlan } from './redrive-plan.schema';
export * from './redrive-result';
export * from './redrive.service';
