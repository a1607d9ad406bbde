import { RedriveRefusedError } from './redrive-refused.error';

/**
 * The dead-letter destination's name splits into destination and group in more than one way (names with
 * dots) and no topology says which is meant. A header in the messages never decides: anyone who may write
 * the DLQ could plant it. Give the topology (`--topology topology.json`, `MESSAGING_ADMIN_TOPOLOGY`,
 * `RedriveServiceOptions.topology`).
 */
export class AmbiguousRedriveRouteError extends RedriveRefusedError {
  /** The guard that refused: always `TARGET`. */
  readonly guard = 'TARGET' as const;

  constructor(
    /** The dead-letter destination. */
    readonly source: string,
    /** The ways its name reads, e.g. `shop + orders.billing`. */
    readonly readings: readonly string[],
  ) {
    super(
      `Redrive refused: '${source}' reads as the dead-letter destination of ${readings.join(' or of ')} ` +
        '(destination + group): give the topology (--topology topology.json or MESSAGING_ADMIN_TOPOLOGY) so ' +
        'that the route comes from it.',
    );
    this.name = 'AmbiguousRedriveRouteError';
  }
}
