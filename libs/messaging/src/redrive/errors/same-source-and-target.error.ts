import { RedriveRefusedError } from './redrive-refused.error';

/** The redrive would publish into the dead-letter destination it reads: a loop. Name another target. */
export class SameSourceAndTargetError extends RedriveRefusedError {
  /** The guard that refused: always `SAME_SOURCE_AND_TARGET`. */
  readonly guard = 'SAME_SOURCE_AND_TARGET' as const;

  constructor(
    /** The destination named as both source and target. */
    readonly destination: string,
  ) {
    super(
      `Redrive refused: source and target are both '${destination}'. The target must be another ` +
        `destination (by default the one the messages failed in).`,
    );
    this.name = 'SameSourceAndTargetError';
  }
}
