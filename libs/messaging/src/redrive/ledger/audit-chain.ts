import { createHash } from 'node:crypto';

/** The previous hash of the first entry of the chain. */
export const AUDIT_CHAIN_GENESIS = `sha256:${'0'.repeat(64)}`;

/** An audit entry's fields as the chain hashes them (the columns of `messaging_redrive_audit`). */
export interface AuditChainRow {
  readonly id: string;
  readonly at: Date;
  readonly action: string;
  readonly actor: string;
  readonly transport: string;
  readonly source: string | null;
  readonly target: string | null;
  readonly planHash: string | null;
  readonly approver: string | null;
  readonly redriveId: string | null;
  readonly messageIds: readonly unknown[];
  readonly outcome: string;
  readonly detail: string | null;
  /** The approval's evidence as stored (JSON text); null or absent for an entry without one. */
  readonly evidence?: string | null;
  /** The database login that wrote the entry (stamped by the trigger); null or absent before issue 45. */
  readonly dbUser?: string | null;
  /** The safety overrides the writing run used, as stored (comma-separated); null or absent for none. */
  readonly overrides?: string | null;
}

/** `<bytes>:<text>`, or `-` for null: no character in one field can shift the next. */
function field(value: string | null): string {
  return value === null ? '-' : `${Buffer.byteLength(value, 'utf8')}:${value}`;
}

/**
 * The hash of an audit entry chained to `previous`, exactly as the database's trigger computes it
 * (`messaging_redrive_audit_hash`, migration `ChainRedriveAudit1764979200000`): so the chain is checked by
 * code that does not trust the database's own functions.
 */
export function auditRowHash(previous: string, row: AuditChainRow): string {
  const ids = row.messageIds.map((id) =>
    id === null ? null : typeof id === 'string' ? id : JSON.stringify(id),
  );
  const text = [
    field(previous),
    field(row.id),
    field(row.at.toISOString()),
    field(row.action),
    field(row.actor),
    field(row.transport),
    field(row.source),
    field(row.target),
    field(row.planHash),
    field(row.approver),
    field(row.redriveId),
    field(`${ids.length}[${ids.map(field).join('')}]`),
    field(row.outcome),
    field(row.detail),
    // Evidence and login (issue 45) are hashed when either is set: entries from before keep their hash.
    row.evidence == null && row.dbUser == null ? '' : field(row.evidence ?? null) + field(row.dbUser ?? null),
    // Overrides (issue 45, findings 11 and 13) are hashed when set: entries without any keep their hash.
    row.overrides == null ? '' : field(row.overrides),
  ].join('');
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/** One place where the chain breaks. */
export interface AuditChainBreak {
  /** The entry (its id), or `head`. */
  readonly entry: string;
  /** What does not match, e.g. `its fields no longer give its hash (it was changed after it was written)`. */
  readonly reason: string;
}

/** What a check of the chain found. */
export type AuditChainCheck =
  | {
      /** Every entry checked carries the hash of its fields and of the entry before it; the head agrees. */
      readonly intact: true;
      /** Entries checked. */
      readonly checked: number;
      /** The last entry: keep its id and hash elsewhere to tell a later rewrite of the whole log. */
      readonly head?: { readonly id: string; readonly hash: string };
    }
  | {
      readonly intact: false;
      /** Entries checked: all of them (the check goes on past a break). */
      readonly checked: number;
      /** The first entry where the chain breaks (its id), or `head`: `breaks[0].entry`. */
      readonly brokenAt: string;
      /** What does not match there: `breaks[0].reason`. */
      readonly reason: string;
      /**
       * Every break, oldest first: each entry is checked against its own hash and the stored hash of the
       * one before it, so a break does not hide a later one.
       */
      readonly breaks: readonly AuditChainBreak[];
    };

/** An entry as stored, with its place in the chain. */
export interface ChainedAuditRow extends AuditChainRow {
  readonly prevHash: string | null;
  readonly rowHash: string | null;
}

/**
 * Checks `rows` (consecutive entries, oldest first) against their hashes and each other; `before` is the
 * hash the first must follow (the genesis when the rows start the log, undefined when unknown: a window),
 * `head` the head table's last entry (when the rows end the log).
 */
export function checkAuditChain(
  rows: readonly ChainedAuditRow[],
  before: string | undefined,
  head?: { readonly id: string; readonly hash: string },
): AuditChainCheck {
  const breaks: AuditChainBreak[] = [];
  let previous = before;
  for (const row of rows) {
    const broken = (reason: string) => breaks.push({ entry: row.id, reason });
    if (row.prevHash === null || row.rowHash === null) {
      broken('it carries no hash (written while the chain was switched off)');
    } else if (previous !== undefined && row.prevHash !== previous) {
      broken('it does not follow the entry before it (an entry was removed, reordered or inserted)');
    } else if (auditRowHash(row.prevHash, row) !== row.rowHash) {
      broken('its fields no longer give its hash (it was changed after it was written)');
    }
    // The next entry is checked against this one as stored: one change is one break, and later ones show.
    previous = row.rowHash ?? undefined;
  }
  const last = rows.at(-1);
  if (head && (last?.id ?? '0') !== head.id) {
    breaks.push({
      entry: 'head',
      reason: `the log ends at entry ${last?.id ?? 'none'}, its head at entry ${head.id} (entries were removed)`,
    });
  } else if (head && last && last.rowHash !== head.hash) {
    breaks.push({ entry: 'head', reason: 'the head holds another hash' });
  }
  if (breaks.length > 0) return chainBroken(rows.length, breaks);
  return { intact: true, checked: rows.length, head: last ? { id: last.id, hash: last.rowHash! } : head };
}

/** A check that found `breaks` (at least one) among `checked` entries. */
export function chainBroken(checked: number, breaks: readonly AuditChainBreak[]): AuditChainCheck {
  return { intact: false, checked, brokenAt: breaks[0].entry, reason: breaks[0].reason, breaks };
}
