import { MessagingError } from '../errors/messaging.error';

/** A key secret (`deadLetter.keySecret`, `MESSAGING_KEY_SECRET`) is missing, malformed or too short. */
export class InvalidKeySecretError extends MessagingError {
  constructor(
    /** Where the secret came from: an option path or an environment variable. */
    readonly origin: string,
    /** The fewest random bytes a key secret may have. */
    readonly minBytes: number,
  ) {
    super(
      `${origin} must be at least ${minBytes} random bytes in base64; generate one with ` +
        '`openssl rand -base64 32` and give every service and the redrive CLI the same one, from the ' +
        'environment or a secret store. (Its value is not shown.)',
    );
    this.name = 'InvalidKeySecretError';
  }
}
