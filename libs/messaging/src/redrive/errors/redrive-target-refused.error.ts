import { RedriveRefusedError } from './redrive-refused.error';

/**
 * The target is not the one the source derives: a redrive only goes back where the messages failed
 * (`<destination>.<group>.dlq` → `<destination>` on Kafka, the work queue `<destination>.<group>` on
 * RabbitMQ), checked against each message's `msg.origin-destination`, and never into a dead-letter or retry
 * destination or a broker-internal one.
 */
export class RedriveTargetRefusedError extends RedriveRefusedError {
  /** The guard that refused: always `TARGET`. */
  readonly guard = 'TARGET' as const;

  constructor(
    /** The dead-letter destination to redrive. */
    readonly source: string,
    /** The target that was refused (the origins, comma-separated, when the messages name several). */
    readonly target: string,
    /** Why, e.g. `a dead-letter, retry or broker-internal destination is never a target`. */
    readonly reason: string,
  ) {
    super(
      `Redrive refused: ${source} cannot be redriven to '${target}' (${reason}). Leave the target out: it ` +
        'is derived from the source.',
    );
    this.name = 'RedriveTargetRefusedError';
  }
}
