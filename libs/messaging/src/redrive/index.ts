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
export * from './bulk';
export * from './errors';
export type {
  DeadLetterPayload,
  InspectedDeadLetter,
  InspectedDeadLetterWithPayload,
} from './inspected-dead-letter';
export * from './issue-approval';
export { topologyFingerprint } from './pinned-fingerprints';
export * from './ledger';
export type { ApprovalGrant, RedriveApproval } from './redrive-approval';
export { RedriveHeaders } from './redrive-headers';
export { RedriveLimits } from './redrive-limits';
export { HeaderDisplayLimits } from './shown-headers';
export type {
  MessagePosition,
  PlannedMessage,
  RedrivePlan,
  SkippedMessage,
  UnsealedRedrivePlan,
} from './redrive-plan';
export { isPlanIntact, sealPlan } from './redrive-plan';
export type { PlanAction, PlanSelection } from './plan-selection';
export { groupDeadLetters, type DeadLetterGroup } from './dead-letter-groups';
export type { DeadLetterQuery } from './dead-letter-search';
export type { DeadLetterBrowse } from './dead-letter-reader';
export { parseReadBudgetMib, type ReadCutOff } from './read-budget';
export { archiveOf, ARCHIVE_ID_HEADER } from './dead-letter-archive';
export { parseRedriveApproval, parseRedrivePlan } from './redrive-plan.schema';
export * from './redrive-result';
export * from './redrive.service';
export { ReplayNotSupportedError } from './errors/replay-not-supported.error';
export { ReplayWindowError } from './errors/replay-window.error';
export {
  ReplayService,
  type ApprovedReplayPlan,
  type ReplayRequest,
  type ReplayResult,
  type ReplayServiceOptions,
} from './replay/replay.service';
export type { ReplayedPartition } from './replay/replay-backend';
export type { PacerClock } from './replay/replay-pacer';
export { REPLAY_ID_HEADER, REPLAY_OF_HEADER } from './replay/replay-copy';
export { ReplayLimits } from './replay/replay-limits';
export {
  isReplayPlan,
  type ReplayInboxMode,
  type ReplayPartitionWindow,
  type ReplayPlan,
} from './replay/replay-plan';
export { parseOffsetWindows } from './replay/replay-window';
export { parseReplayPlan } from './replay/replay-plan.schema';
