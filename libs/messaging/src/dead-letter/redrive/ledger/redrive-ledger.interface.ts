/** What an audit entry records. */
export type RedriveAuditAction = 'PLAN' | 'APPROVE' | 'EXECUTE' | 'REFUSE';

/** One entry of the redrive audit log: who did what, when, from where to where, with which messages. */
export interface RedriveAuditEntry {
  readonly action: RedriveAuditAction;
  /** The admin principal (plan, execute, most refusals) or the approver (approve). */
  readonly actor: string;
  readonly transport: 'kafka' | 'rabbitmq';
  readonly source?: string;
  readonly target?: string;
  readonly planHash?: string;
  readonly approver?: string;
  readonly redriveId?: string;
  /** The planned or moved messages' ids (null for a message without one). */
  readonly messageIds?: readonly (string | null)[];
  /** PLANNED, APPROVED, REDRIVEN, INCOMPLETE, FAILED, or the guard that refused (e.g. APPROVAL_USED). */
  readonly outcome: string;
  /** More about the outcome: an error message, counts. Never secrets or payloads. */
  readonly detail?: string;
}

/** An entry as stored. */
export interface RecordedRedriveAuditEntry extends RedriveAuditEntry {
  readonly id: string;
  readonly at: Date;
}

/** The use of an approval, recorded when it is executed. */
export interface ApprovalUse {
  readonly nonce: string;
  readonly planHash: string;
  readonly approver: string;
  readonly redriveId: string;
  readonly executedBy: string;
}

/**
 * The durable side of redrive, shared by every admin process (the admin database): the audit log, the
 * used approvals (an approval works once) and an exclusive hold per dead-letter destination (two redrives
 * of one DLQ never run at once). `PostgresRedriveLedger` is the implementation.
 */
export interface RedriveLedger {
  /** Appends an entry to the audit log. */
  record(entry: RedriveAuditEntry): Promise<void>;
  /**
   * Records the approval's nonce as used; resolves false (recording nothing) when it was used before, with
   * who used it.
   */
  claimApproval(use: ApprovalUse): Promise<{ claimed: true } | { claimed: false; usedBy: string }>;
  /**
   * Runs `work` holding `source` exclusively across processes; throws `RedriveInProgressError` at once when
   * another process holds it.
   */
  withExclusiveHold<T>(transport: 'kafka' | 'rabbitmq', source: string, work: () => Promise<T>): Promise<T>;
  /** The latest entries, newest last; of one source when given. */
  history(filter: { readonly source?: string; readonly limit: number }): Promise<RecordedRedriveAuditEntry[]>;
  close(): Promise<void>;
}
