import { MessagingError } from './messaging.error';

/** One bad option: where it is and what is wrong with it. */
export interface OptionIssue {
  /** The option's path, e.g. `relay.batchSize` (`(root)` for the options object itself). */
  readonly path: string;
  /** What is wrong with it. */
  readonly message: string;
}

/** `MessagingModule.forRoot()` got options it cannot run with. Raised at startup. */
export class InvalidMessagingOptionsError extends MessagingError {
  constructor(
    /** Every bad option, each named by its path. */
    readonly issues: readonly OptionIssue[],
  ) {
    super(
      `Invalid MessagingModule options:\n${issues.map((i) => `  - ${i.path}: ${i.message}`).join('\n')}\n` +
        'See the options documented on MessagingModuleOptions.',
    );
    this.name = 'InvalidMessagingOptionsError';
  }
}
