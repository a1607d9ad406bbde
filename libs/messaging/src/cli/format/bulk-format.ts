import { printable } from '../../common/printable';
import { BulkProgress, BulkRedriveResult } from '../../redrive/bulk/bulk-executor';
import { BulkSelection } from '../../redrive/bulk/bulk-selection';
import { table } from './table';

/** What a plan at scale shows instead of its messages: counts by failure code, what stays, the digest. */
export function formatBulkPlan(bulk: BulkSelection): string[] {
  const lines = [
    `A plan at scale: its ${bulk.taken} message(s) are kept in order in the admin database (plan store ` +
      `${bulk.store}); the plan signs their digest ${bulk.digest}.`,
  ];
  if (bulk.skipped > 0) lines.push(`${bulk.skipped} selected message(s) cannot be redriven and stay.`);
  if (bulk.kept > 0) {
    lines.push(`${bulk.kept} message(s) between them stay: re-parked at the end of the source, in order.`);
  }
  const rows = Object.entries(bulk.byCode)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, count]) => [printable(code), String(count)]);
  if (rows.length > 0) lines.push('', ...table(['FAILURE CODE', 'MESSAGES'], rows));
  return lines;
}

/** One progress line of an execution at scale: `Progress: 4,200 of 10,000 (42%), chunk 42`. */
export function formatProgress(progress: BulkProgress): string {
  const percent = progress.total === 0 ? 100 : Math.floor((progress.done * 100) / progress.total);
  return `Progress: ${progress.done} of ${progress.total} (${percent}%), chunk ${progress.chunks} of this run`;
}

/** The outcome of an execution at scale. */
export function formatBulkResult(result: BulkRedriveResult): string[] {
  const discard = result.action === 'discard';
  const lines = [
    `${discard ? 'Discard' : 'Redrive'} ${result.redriveId}${result.resumed ? ' (resumed)' : ''}: ` +
      `${result.source} -> ${result.target}`,
    `${result.redriven} message(s) ${discard ? `archived in ${result.target}` : 'redriven'} ` +
      `(${result.movedNow} by this run); ${result.leftInSource} left in ${result.source}.`,
  ];
  if (result.stoppedBy) {
    lines.push(printable(`Stopped: ${result.stoppedBy}. Run the same command again to continue.`));
  }
  return lines;
}
