import { MessagingError } from './messaging.error';

/**
 * `relay.mode: 'logical'` cannot work on this server or as this role: the startup names every missing piece
 * (`wal_level`, replication connections, the role's REPLICATION attribute) with how to add it.
 */
export class LogicalDecodingUnavailableError extends MessagingError {
  constructor(
    /** What is missing, one sentence each, with the fix. */
    readonly problems: readonly string[],
  ) {
    super(
      `relay.mode 'logical' cannot run here:\n${problems.map((p) => `  - ${p}`).join('\n')}\n` +
        "Or keep the polling relay (relay.mode 'poll', the default), which needs none of this.",
    );
    this.name = 'LogicalDecodingUnavailableError';
  }
}
