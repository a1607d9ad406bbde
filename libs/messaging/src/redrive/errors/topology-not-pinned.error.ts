import { RedriveRefusedError } from './redrive-refused.error';

/**
 * The topology in use is not the one the admin database pins: the executor (or approver) named another
 * topology file than the reviewed one, or none, so a route-ambiguous DLQ could be sent elsewhere. Use the
 * reviewed file, or have the tables' owner pin the new one after review (`nest-messaging db pin-topology`).
 */
export class TopologyNotPinnedError extends RedriveRefusedError {
  /** The guard that refused: always `TOPOLOGY_NOT_PINNED`. */
  readonly guard = 'TOPOLOGY_NOT_PINNED' as const;

  constructor(
    /** The fingerprint of the topology in use; undefined when none is. */
    readonly fingerprint: string | undefined,
    /** The fingerprint the admin database pins. */
    readonly pinned: string,
  ) {
    super(
      `Redrive refused: the topology in use (${fingerprint ?? 'none'}) is not the reviewed one the admin ` +
        `database pins (${pinned}). Use the reviewed topology file (--topology or MESSAGING_ADMIN_TOPOLOGY), ` +
        "or have the tables' owner pin the new one after review (nest-messaging db pin-topology).",
    );
    this.name = 'TopologyNotPinnedError';
  }
}
