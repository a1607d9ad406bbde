/**
 * A planned message's real key cannot be restored: the redrive has no key secret (`MESSAGING_KEY_SECRET`),
 * another one than the services', or the message carries no sealed key. Redriven with its pseudonym, it
 * would land on another partition and its handler would see a hash: give the services' key secret.
 */
export class KeyNotRestorableError extends Error {
  constructor(
    readonly source: string,
    readonly messageId: string | null,
    readonly reason: string,
  ) {
    super(
      `Cannot restore the key of message ${messageId ?? '(no id)'} in ${source}: ${reason}. Give the redrive ` +
        "the services' key secret (MESSAGING_KEY_SECRET); nothing was moved.",
    );
    this.name = 'KeyNotRestorableError';
  }
}
