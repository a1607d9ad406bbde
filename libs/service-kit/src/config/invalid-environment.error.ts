/** One environment variable the service cannot run with. */
export interface EnvironmentIssue {
  readonly variable: string;
  /** The value as given (passwords in URLs masked), or undefined when the variable is missing. */
  readonly value: string | undefined;
  readonly problem: string;
}

/** The environment a service was started with is invalid. Raised before anything connects. */
export class InvalidEnvironmentError extends Error {
  constructor(
    readonly service: string,
    readonly issues: readonly EnvironmentIssue[],
  ) {
    super(
      `Invalid environment for ${service}:\n` +
        issues
          .map((i) => `  - ${i.variable}${i.value === undefined ? '' : `='${i.value}'`}: ${i.problem}`)
          .join('\n') +
        '\nFix or unset these variables (every one has a default for the local services).',
    );
    this.name = 'InvalidEnvironmentError';
  }
}
