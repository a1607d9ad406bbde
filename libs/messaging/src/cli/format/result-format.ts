import { DeadLetterQueueInfo, RedriveResult } from '../../redrive/redrive-result';
import { positionText } from './plan-format';
import { table } from './table';

/** A redrive's outcome, message by message. */
export function formatResult(result: RedriveResult): string[] {
  const lines = [
    `${result.action === 'discard' ? 'Discard' : 'Redrive'} ${result.redriveId}: ${result.source} -> ${result.target}`,
    result.action === 'discard'
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
