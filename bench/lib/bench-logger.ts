import { ConsoleLogger } from '@nestjs/common';

/** Warnings that several applications in one process (and topics the bench created first) always cause. */
const EXPECTED = [
  // Every bench application has a default DataSource of its own container; they override nothing.
  /A data source with the default name is already registered/,
  // The library asks for topics the bench (or another of its applications) already created.
  /Topic creation errors/,
  // kafkajs warns about the library's producer retry limit on every connect.
  /Limiting retries for the idempotent producer/,
];

/** Errors and warnings only, without the ones running several applications side by side always causes. */
export class BenchLogger extends ConsoleLogger {
  constructor() {
    super('Bench', { logLevels: ['error', 'warn'] });
  }

  override warn(message: unknown, ...rest: unknown[]): void {
    if (typeof message === 'string' && EXPECTED.some((pattern) => pattern.test(message))) return;
    super.warn(message, ...(rest as [string]));
  }
}
