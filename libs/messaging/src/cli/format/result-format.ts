import { DeadLetterQueueInfo, RedriveResult } from '../../redrive/redrive-result';
import { positionText } from './plan-format';
import { table } from './table';

/** A redrive's outcome, message by message. */
export function formatResult(result: RedriveResult): string[] {
  const verb = result.action === 'discard' ? 'Discard' : result.action === 'edit' ? 'Edit' : 'Redrive';
  const lines = [
    `${verb} ${result.redriveId}: ${result.source} -> ${result.target}`,
    result.action === 'edit'
      ? result.redriven === 1
        ? `The edited copy was published to ${result.target}; the original is archived in ${result.source}.archive.`
        : `Nothing moved: the original is still in ${result.source}.`
      : result.action === 'discard'
        ? `${result.redriven} message(s) archived in ${result.target}; ${result.leftInSource} left in ${result.source}.`
        : `${result.redriven} message(s) redriven; ${result.leftInSource} left in ${result.source}.`,
  ];
  if (result.messages.length === 0) return lines;
  const rows = result.messages.map((m) => [
    positionText(m.position),
    m.messageId ?? '(none)',
    m.status,
    m.error ?? '',
  ]);
  return [...lines, '', ...table(['POSITION', 'MESSAGE ID', 'STATUS', 'WHY'], rows)];
}

/** Dead-letter destinations and their depths. */
export function formatList(queues: readonly DeadLetterQueueInfo[]): string[] {
  if (queues.length === 0) return ['No dead-letter destinations found.'];
  const rows = queues.map((q) => [
    q.name,
    q.exists ? String(q.depth) : 'not found',
    q.consumers === undefined ? '' : String(q.consumers),
  ]);
  return table(['DEAD-LETTER DESTINATION', 'WAITING', 'CONSUMERS'], rows);
}
