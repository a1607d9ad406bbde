import { MessagingError } from '../errors/messaging.error';

/** The command line or the environment is incomplete or wrong; the message says what to give. */
export class CliUsageError extends MessagingError {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}
