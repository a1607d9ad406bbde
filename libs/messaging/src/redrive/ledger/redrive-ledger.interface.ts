import type { AuditChainCheck } from './audit-chain';

/**
 * What an audit entry records: a redrive step (plan, approve, execute), a refusal, or an access to the
 * operations console (sign-in, sign-out, a refused request, a payload shown).
 */
export type RedriveAuditAction = 'PLAN' | 'APPROVE' | 'EXECUTE' | 'REFUSE' | 'ACCESS';

/**
 * A safety check a run was told to skip, recorded in every audit entry it writes (issue 45):
 * `insecure-transport`, a connection in clear text to a broker or admin database not on this machine
 * (`--insecure-transport`); `rewrite-rights`, a database login that can rewrite the audit log
 * (`--allow-rewritable-audit`).
 */
export type AuditOverride = 'insecure-transport' | 'rewrite-rights';

/** One entry of the redrive audit log: who did what, when, from where to where, with which messages. */
export interface RedriveAuditEntry {
  /** What was done: planned, approved, executed, or refused. */
  readonly action: RedriveAuditAction;
  /** The admin principal (plan, execute, most refusals) or the approver (approve). */
  readonly actor: string;
  /** The broker the operation ran on. */
  readonly transport: 'kafka' | 'rabbitmq';
  /** The dead-letter destination; undefined when the operation named none. */
  readonly source?: string;
  /** The redrive target; undefined when none was given or derived (e.g. a plan of an empty DLQ). */
  readonly target?: string;
  /** The plan's `hash`; undefined for an operation without a plan. */
  readonly planHash?: string;
  /** Who approved (approve, execute and their refusals); undefined when no approval was involved. */
  readonly approver?: string;
  /** The redrive's id, as in the copies' `msg.redrive-id`; set for an execution (or its refusal) only. */
  readonly redriveId?: string;
  /** The planned or moved messages' ids (null for a message without one). */
  readonly messageIds?: readonly (string | null)[];
  /** PLANNED, APPROVED, REDRIVEN, INCOMPLETE, FAILED, or the guard that refused (e.g. APPROVAL_USED). */
  readonly outcome: string;
  /** More about the outcome: an error message, counts. Never secrets or payloads. */
  readonly detail?: string;
  /**
   * The approval's evidence (approve, execute): what proves later who signed, with which key, under which
   * keyring; undefined for an entry without an approval.
   */
  readonly evidence?: ApprovalEvidence;
  /**
   * The safety checks the writing run skipped (see `AuditOverride`), in the chain's hash; undefined or
   * empty when it skipped none. The ledger adds its own (its database connection, its login).
   */
  readonly overrides?: readonly AuditOverride[];
}

/**
 * An approval as the audit log keeps it (issue 45): enough to verify its signature again later against the
 * keyring it names, and to link an EXECUTE entry to its APPROVE entry by the nonce.
 */
export interface ApprovalEvidence {
  /** The approval's nonce. */
  readonly nonce: string;
  /** Its Ed25519 signature, base64. */
  readonly signature: string;
  /** When it was signed (the approver's clock), ISO 8601. */
  readonly approvedAt: string;
  /** When its validity ends, ISO 8601. */
  readonly expiresAt: string;
  /** `sha256:` of the approver's public key (SPKI DER) that verified it; undefined when none did. */
  readonly keyId?: string;
  /** The fingerprint of the approver keyring it was checked with (`ApproverKeyring.fingerprint`). */
  readonly keyring?: string;
}

/** An entry as stored. */
export interface RecordedRedriveAuditEntry extends RedriveAuditEntry {
  /** Its id in the audit log, increasing with each entry (a bigint, as a decimal string). */
  readonly id: string;
  /** When it was recorded, on the admin database's clock (set by the database, not the writer). */
  readonly at: Date;
  /** Its hash in the audit log's chain (`sha256:…`), when the ledger keeps one. */
  readonly hash?: string;
  /** The database login that wrote it (stamped by the database, not the writer); undefined before issue 45. */
  readonly dbUser?: string;
}

/** Which audit entries `RedriveLedger.history()` reads: the latest `limit` of those that match. */
export interface RedriveAuditFilter {
  /** Entries of this dead-letter destination only. */
  readonly source?: string;
  /** Entries of this actor only (exact name). */
  readonly actor?: string;
  /** Entries of this action only. */
  readonly action?: RedriveAuditAction;
  /** Entries recorded at or after this time. */
  readonly from?: Date;
  /** Entries recorded before this time. */
  readonly to?: Date;
  /** Entries older than the entry with this id (the next page back); exclusive. */
  readonly before?: string;
  /** Entries newer than the entry with this id (the page forward): the `limit` right after it. */
  readonly after?: string;
  /** At most this many entries. */
  readonly limit: number;
}

/** What `RedriveLedger.claimApproval()` resolves with. */
export type ApprovalClaim =
  | { readonly claimed: true }
  | {
      readonly claimed: false;
      /** Who took it first and when: `<principal> at <ISO 8601>`. */
      readonly usedBy: string;
      /** What was taken: the approval's nonce, or one of `ApprovalUse.claims`. Default: `nonce`. */
      readonly taken?: 'nonce' | 'claim';
    };

/** The use of an approval, recorded when it is executed. */
export interface ApprovalUse {
  /** The approval's nonce: recorded once, so the approval runs once. */
  readonly nonce: string;
  /** The hash of the plan executed. */
  readonly planHash: string;
  /** Who signed the approval. */
  readonly approver: string;
  /** The id of the redrive that uses it. */
  readonly redriveId: string;
  /** The admin principal who executes it. */
  readonly executedBy: string;
  /**
   * Other one-time tokens the execution takes with the nonce, all or none (an edit's `edit:…` claim of its
   * dead letter, so that it is edited once). Default: none.
   */
  readonly claims?: readonly string[];
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
   * Records the approval's nonce as used, and `started` (the execution's STARTED entry) in the audit log in
   * the same transaction: both or neither, with `use.claims`. Resolves false (recording nothing) when the
   * nonce or a claim was taken before, with who took it and which (`taken`).
   */
  claimApproval(use: ApprovalUse, started?: RedriveAuditEntry): Promise<ApprovalClaim>;
  /**
   * The fingerprint of the reviewed approver keyring the admin database pins
   * (`nest-messaging db pin-keyring`), or undefined when none is pinned; approve and execute refuse any
   * other keyring.
   */
  pinnedKeyring?(): Promise<string | undefined>;
  /**
   * The fingerprint of the reviewed topology the admin database pins (`nest-messaging db pin-topology`), or
   * undefined when none is pinned; approve and execute then refuse any other topology, or none.
   */
  pinnedTopology?(): Promise<string | undefined>;
  /**
   * Refuses (`AuditLogRewritableError`) when this ledger's login can rewrite the audit log despite its
   * triggers, unless `allow`; allowed, every entry written from then on carries the override
   * `rewrite-rights`. Resolves with what lets the login rewrite the log (empty: nothing), for a loud warning.
   */
  requireAppendOnly?(allow: boolean): Promise<string[]>;
  /**
   * The database time of the first APPROVE entry whose evidence names this approval nonce, or undefined
   * when there is none. Execution refuses an approval dated later than that (`POST_DATED`): an approver's
   * clock cannot make an approval valid from a later day.
   */
  approvalRecordedAt?(nonce: string): Promise<Date | undefined>;
  /**
   * Runs `work` holding `source` exclusively across processes; throws `RedriveInProgressError` at once when
   * another process holds it.
   */
  withExclusiveHold<T>(transport: 'kafka' | 'rabbitmq', source: string, work: () => Promise<T>): Promise<T>;
  /**
   * The actor of the PLAN entry `RedriveService.plan()` recorded for a plan with this hash (the first, if
   * several), or undefined when there is none: the planner as the ledger knows them, never as a file says.
   */
  plannerOf(planHash: string): Promise<string | undefined>;
  /**
   * The latest `limit` entries that match `filter`, newest last (with `after`: the `limit` entries right
   * after that one).
   */
  history(filter: RedriveAuditFilter): Promise<RecordedRedriveAuditEntry[]>;
  /**
   * Checks the audit log's hash chain: the whole log, or the latest `last` entries. Intact means no entry was
   * changed, removed or reordered since it was written (see `AuditChainCheck`).
   */
  verifyChain(options?: { readonly last?: number }): Promise<AuditChainCheck>;
  /** Releases the ledger's connections; the ledger is not used after. */
  close(): Promise<void>;
}
