import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { isKeyPseudonym, unsealKey } from '../failure/key-pseudonym';
import { KeySecret } from '../failure/key-secret';
import { KeyNotRestorableError } from './errors/key-not-restorable.error';

/**
 * The real key of a dead-letter copy: a pseudonymous key is opened from `msg.sealed-key` with the key secret
 * (and checked against its pseudonym). Throws `KeyNotRestorableError` when that cannot be done: a redrive
 * never puts a message back under its pseudonym, nor under a plain key the library's dead-lettering never
 * writes (issue 45 item 8: a record planted in the DLQ by another writer).
 */
export function restoreKey(parked: WireMessage, secret: KeySecret | undefined): string | null {
  const key = parked.key;
  if (key === null) return key;
  const messageId = parked.headers[MessageHeaders.ID] ?? null;
  if (!isKeyPseudonym(key)) {
    // The library's dead-lettering never writes a plain key: whoever did (any writer of the DLQ) would have
    // the redrive publish it, as the admin, into the source (on a compacted topic, the latest value for it).
    throw new KeyNotRestorableError(
      parked.destination,
      messageId,
      'its key is a plain key, not a pseudonym with a sealed key as the library dead-letters it, so the ' +
        'library did not park it here (another writer of the dead-letter destination did)',
      'Find who wrote it; discard it (dlq plan --discard) rather than redrive it',
    );
  }
  const sealed = parked.headers[MessageHeaders.SEALED_KEY];
  const fail = (reason: string) => new KeyNotRestorableError(parked.destination, messageId, reason);
  if (!secret) throw fail('no key secret was given');
  if (!sealed) throw fail('the copy carries no sealed key (it was dead-lettered by an older version)');
  const restored = unsealKey(sealed, key, secret);
  if (restored === undefined) throw fail('the sealed key does not open with this key secret');
  return restored;
}
