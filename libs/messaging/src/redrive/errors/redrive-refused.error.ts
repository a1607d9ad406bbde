import { MessagingError } from '../../errors/messaging.error';

/** Which guard refused a redrive (docs/guide/08-redrive.md, What the redrive trusts). */
export type RedriveGuard =
  | 'ADMIN_CREDENTIAL'
  | 'INSECURE_CONNECTION'
  | 'APPROVAL'
  | 'APPROVAL_EXPIRED'
  | 'APPROVAL_MISMATCH'
  | 'UNKNOWN_APPROVER'
  | 'APPROVAL_USED'
  | 'BATCH_LIMIT'
  | 'SOURCE'
  | 'TARGET'
  | 'SAME_SOURCE_AND_TARGET'
  | 'IN_PROGRESS'
  | 'STALE_PLAN'
  | 'PLAN_ALTERED'
  | 'KEYRING_NOT_PINNED'
  | 'TOPOLOGY_NOT_PINNED'
  | 'AUDIT_REWRITABLE'
  | 'EDIT_REFUSED'
  | 'EDIT_CLAIMED';

/**
 * Base class of the errors by which a redrive guard refuses an operation. Catch this one to tell a refusal
 * (the CLI exits with 2) from a failure (a broker error, exit 1); each subclass names its guard.
 */
export abstract class RedriveRefusedError extends MessagingError {
  /** The guard that refused. */
  abstract readonly guard: RedriveGuard;
}
