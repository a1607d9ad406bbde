import { RecordedRedriveAuditEntry } from '../../dead-letter/redrive/ledger/redrive-ledger.interface';
import { table } from './table';

/** The audit log, oldest first: who did what, when, from where to where, with which outcome. */
export function formatHistory(entries: readonly RecordedRedriveAuditEntry[]): string[] {
  if (entries.length === 0) return ['No redrive activity recorded.'];
  const rows = entries.map((e) => [
    e.at.toISOString(),
    e.action,
    e.actor,
    `${e.source ?? '-'} -> ${e.target ?? '-'}`,
    e.approver ?? '-',
    e.redriveId ?? '-',
    String(e.messageIds?.length ?? 0),
    e.outcome,
  ]);
  return table(['AT', 'ACTION', 'WHO', 'ROUTE', 'APPROVER', 'REDRIVE ID', 'MESSAGES', 'OUTCOME'], rows);
}

/** One entry in full, message ids and detail included (`dlq history --verbose`). */
export function formatHistoryDetail(entries: readonly RecordedRedriveAuditEntry[]): string[] {
  return entries.flatMap((e) => [
    ...table(['#', 'DETAIL'], [[e.id, e.detail ?? '']]),
    ...table(['', 'MESSAGE IDS'], [['', (e.messageIds ?? []).map((id) => id ?? '(none)').join(', ')]]),
    '',
  ]);
}
