import { MessagingError } from './messaging.error';

/** The application uses a decorator in a way the library cannot honour. Raised at startup. */
export class MessagingConfigurationError extends MessagingError {
  constructor(
    /** The decorator and method, e.g. `@RetryPolicy on OrdersHandler.onOrder`. */
    readonly where: string,
    /** What is wrong, and how to fix it. */
    readonly problem: string,
  ) {
    super(`${where}: ${problem}`);
    this.name = 'MessagingConfigurationError';
  }
}
