import { MessageHeaders } from '../envelope/message-headers';
import { keyPseudonym } from '../failure/key-pseudonym';
import { KeySecret } from '../failure/key-secret';
import { DeadLetterRecord } from './dead-letter-record';

/** What to look for in a dead-letter destination; both given: a message must match both. */
export interface DeadLetterQuery {
  /** The message's `msg.id`. */
  readonly messageId?: string;
  /**
   * The message's real key, as the operator knows it: compared through its pseudonym (the key secret
   * derives it), never shown or stored.
   */
  readonly key?: string;
}

/**
 * A test for records matching `query`. A key needs the key secret (without one, a key matches only a
 * record parked under that very key, i.e. one that had no pseudonym).
 */
export function matcherOf(
  query: DeadLetterQuery,
  secret: KeySecret | undefined,
): (record: DeadLetterRecord) => boolean {
  const key = query.key === undefined ? undefined : secret ? keyPseudonym(query.key, secret) : query.key;
  return (record) =>
    (query.messageId === undefined || record.wire.headers[MessageHeaders.ID] === query.messageId) &&
    (key === undefined || record.wire.key === key);
}
