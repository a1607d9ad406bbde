import { WireMessage } from '../envelope/wire-message';

/** Header of an archived copy: the id of the discard that archived it (as an execution's `redriveId`). */
export const ARCHIVE_ID_HEADER = 'msg.archive-id';

/**
 * Where a discard puts a dead-letter destination's messages: `<dlq>.archive` (a RabbitMQ queue, a Kafka
 * topic), created by the admin at the first discard. No consumer reads it; an operator still can (the console's
 * archive view, `dlq list --source <dlq>.archive`), and nothing there ever runs again.
 */
export function archiveOf(source: string): string {
  return `${source}.archive`;
}

/** The archived copy of a parked message: the copy as it was parked (key pseudonym, failure headers), plus the discard's id. */
export function archiveCopy(parked: WireMessage, archive: string, discardId: string): WireMessage {
  return {
    destination: archive,
    key: parked.key,
    headers: { ...parked.headers, [ARCHIVE_ID_HEADER]: discardId },
    body: parked.body,
  };
}
