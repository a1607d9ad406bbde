import { MessagePosition } from '../planned-message';

/** What an operator asks to change in one dead letter (`RedriveService.planEdit()`). */
export interface MessageEditRequest {
  /** The dead-letter destination. */
  readonly source: string;
  /** Where the dead letter sits (as the console and `dlq list` show it). */
  readonly position: MessagePosition;
  /** Its `msg.id`: the edit is refused (`STALE_PLAN`) when another message sits at `position` now. */
  readonly messageId: string;
  /** The whole edited payload, JSON text; its values are what the edited copy carries. */
  readonly payload: string;
  /**
   * Headers to set (a value) or remove (null). Only headers the redriven copy carries
   * (`RedriveServiceOptions.carryHeaders`) may change; never the library's `msg.*` (id, key, type,
   * redrive, failure headers), the trace context, `content-type` or a broker's `x-*`. Default: none.
   */
  readonly headers?: Readonly<Record<string, string | null>>;
  /**
   * Plan the edit although no event definition of the message's type and version is known
   * (`RedriveServiceOptions.events`): the plan then says `validated: 'none'`, for the approver to see.
   * Default false: such an edit is refused (`NO_SCHEMA`).
   */
  readonly withoutSchema?: boolean;
  /** The editor, when a front end acts for its user (the console). Default: the admin credential's principal. */
  readonly plannedBy?: string;
}

/** One change of an edit, as the approver reads and signs it. */
export interface EditChange {
  /**
   * What changes: a JSON pointer into the payload (RFC 6901, `""` for the whole payload, `/title`,
   * `/tags/0`), or `header:<name>`.
   */
  readonly path: string;
  /** `add`: there was no value; `remove`: there is none after; `replace`: another value. */
  readonly op: 'add' | 'remove' | 'replace';
  /** The value before, as JSON text (a header: its text); absent for `add`. */
  readonly before?: string;
  /** The value after, as JSON text (a header: its text); absent for `remove`. */
  readonly after?: string;
}

/** The edit an edit plan carries (`RedrivePlan.edit`), covered by the plan's hash and so by the approval. */
export interface PlanEdit {
  /** The edited message's `msg.id`: the edited copy keeps it (see docs/guide/08-redrive.md, Edit and retry). */
  readonly messageId: string;
  /** The edited payload as the copy carries it: compact JSON. */
  readonly payload: string;
  /** The header changes: a value to set, null to remove (sorted by name). */
  readonly headers: Readonly<Record<string, string | null>>;
  /** Every change, payload first (by path), then headers: what the approver signs. */
  readonly diff: readonly EditChange[];
  /** `sha256:` of the diff with the message's id and fingerprint: what the audit log keeps of the edit. */
  readonly diffHash: string;
  /**
   * `schema`: the edited payload passed the event definition of its type and version; `none`: no definition
   * was known and the editor planned it unvalidated (`withoutSchema`).
   */
  readonly validated: 'schema' | 'none';
}
