import { InspectedDeadLetter } from '../redrive/inspected-dead-letter';

/** Message ids an audit entry of a search names at most; the count says how many were found. */
const IDS_NAMED = 10;

/**
 * The audit log's detail of a search by key: what was asked besides the key and which messages it found.
 * Never the key itself (the console neither shows nor logs it).
 */
export function keySearchDetail(
  messageId: string | undefined,
  found: readonly InspectedDeadLetter[],
): string {
  const asked = messageId === undefined ? 'by key' : `by key and message ${messageId}`;
  const ids = found.map((l) => l.message.messageId ?? '(none)');
  const named = ids.slice(0, IDS_NAMED).join(', ');
  const more = ids.length > IDS_NAMED ? ` and ${ids.length - IDS_NAMED} more` : '';
  return `${asked}: ${found.length} message(s) found${ids.length > 0 ? ` (${named}${more})` : ''}`;
}
