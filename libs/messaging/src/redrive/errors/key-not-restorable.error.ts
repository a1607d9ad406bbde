import { MessagingError } from '../../errors/messaging.error';

/**
 * A planned message's real key cannot be restored: the redrive has no key secret (`MESSAGING_KEY_SECRET`),
 * another one than the services', or the message carries no sealed key. Redriven with its pseudonym, it
 * would land on another partition and its handler would see a hash: give the services' key secret.
 */
export class KeyNotRestorableError extends MessagingError {
  constructor(
    /** The dead-letter destination the message was read from. */
    readonly source: string,
    /** The message's `msg.id`; null when it has none. */
    readonly messageId: string | null,
    /** Why the key cannot be restored (no key secret, another secret, no sealed key, a plain key). */
    readonly reason: string,
    /** What to do about it. Default: give the redrive the services' key secret. */
    advice = "Give the redrive the services' key secret (MESSAGING_KEY_SECRET)",
  ) {
    super(
      `Cannot restore the key of message ${messageId ?? '(no id)'} in ${source}: ${reason}. ${advice}; nothing was moved.`,
    );
    this.name = 'KeyNotRestorableError';
  }
}
