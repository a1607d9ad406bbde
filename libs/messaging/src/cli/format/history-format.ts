import { AuditChainCheck } from '../../redrive/ledger/audit-chain';
import { RecordedRedriveAuditEntry } from '../../redrive/ledger/redrive-ledger.interface';
import { table } from './table';

/** The audit log, oldest first: who did what, when, from where to where, with which outcome. */
export function formatHistory(entries: readonly RecordedRedriveAuditEntry[]): string[] {
  if (entries.length === 0) return ['No redrive activity recorded.'];
  // A run that skipped a safety check (issue 45): a column of its own, shown only when one did.
  const overridden = entries.some((e) => e.overrides?.length);
  const rows = entries.map((e) => [
    e.at.toISOString(),
    e.action,
    e.actor,
    `${e.source ?? '-'} -> ${e.target ?? '-'}`,
    e.approver ?? '-',
    e.redriveId ?? '-',
    String(e.messageIds?.length ?? 0),
    e.outcome,
    ...(overridden ? [e.overrides?.length ? e.overrides.join(', ') : '-'] : []),
  ]);
  const headers = ['AT', 'ACTION', 'WHO', 'ROUTE', 'APPROVER', 'REDRIVE ID', 'MESSAGES', 'OUTCOME'];
  return table(overridden ? [...headers, 'OVERRIDES'] : headers, rows);
}

/** One entry in full, message ids and detail included (`dlq history --verbose`). */
export function formatHistoryDetail(entries: readonly RecordedRedriveAuditEntry[]): string[] {
  return entries.flatMap((e) => [
    ...table(['#', 'DETAIL'], [[e.id, e.detail ?? '']]),
    ...table(['', 'MESSAGE IDS'], [['', (e.messageIds ?? []).map((id) => id ?? '(none)').join(', ')]]),
    ...(e.dbUser ? table(['', 'DATABASE LOGIN'], [['', e.dbUser]]) : []),
    ...(e.overrides?.length ? table(['', 'OVERRIDES'], [['', e.overrides.join(', ')]]) : []),
    ...(e.evidence
      ? table(
          ['', 'APPROVAL'],
          [
            [
              '',
              `nonce ${e.evidence.nonce}, key ${e.evidence.keyId ?? '-'}, keyring ${e.evidence.keyring ?? '-'}, ` +
                `signed ${e.evidence.approvedAt}, signature ${e.evidence.signature}`,
            ],
          ],
        )
      : []),
    '',
  ]);
}

/**
 * Executions among `entries` that STARTED (their nonce recorded, messages about to move) with no outcome
 * after: killed after the move, or still running. Read the DLQ and the target for each (issue 45).
 */
export function formatUnfinished(entries: readonly RecordedRedriveAuditEntry[]): string[] {
  const started = (e: RecordedRedriveAuditEntry) => e.action === 'EXECUTE' && e.outcome === 'STARTED';
  // An outcome, or a refusal on the way (a plan gone stale while moving), ends an execution.
  const ended = new Set(entries.filter((e) => e.redriveId && !started(e)).map((e) => e.redriveId));
  return entries
    .filter((e) => started(e) && !ended.has(e.redriveId))
    .map(
      (e) =>
        `Execution ${e.redriveId ?? '-'} (entry ${e.id}, ${e.source ?? '-'}) STARTED with no outcome: ` +
        'it did not finish, or is still running; read the DLQ and the target.',
    );
}

/** What `dlq history --verify` found, and a warning when this login could rewrite the log anyway. */
export function formatChainCheck(check: AuditChainCheck, rewriteRights: readonly string[]): string[] {
  const lines = check.intact
    ? [
        `Audit chain intact: ${check.checked} entries.` +
          (check.head ? ` Head: entry ${check.head.id}, ${check.head.hash}.` : ''),
        'Keep the head somewhere else (a ticket, a chat): a later check that does not reach it shows a rewrite.',
      ]
    : [
        `Audit chain BROKEN in ${check.breaks.length} place${check.breaks.length === 1 ? '' : 's'} ` +
          `(${check.checked} entries checked):`,
        ...check.breaks.map(
          (b) => `  BROKEN at ${b.entry === 'head' ? 'the head' : `entry ${b.entry}`}: ${b.reason}.`,
        ),
      ];
  if (rewriteRights.length > 0) {
    lines.push(
      `Warning: this login can rewrite the audit log (${rewriteRights.join(', ')}): give the CLI and the ` +
        "console a role with SELECT and INSERT only (the guide's recipe for the admin database).",
    );
  }
  return lines;
}
