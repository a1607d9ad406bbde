/** The application uses a decorator in a way the library cannot honour. Raised at startup. */
export class MessagingConfigurationError extends Error {
  constructor(
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${where}: ${problem}`);
    this.name = 'MessagingConfigurationError';
  }
}
