import { MessagingError } from '../../errors/messaging.error';

/**
 * A replay window the topic cannot serve (before the log's start, past its end, a partition it lacks, more
 * than `ReplayLimits.MAX_RECORDS` offsets) or that was written wrong (a bad offset form, a start after its end,
 * a rate out of range): nothing was planned. A misuse, not a guard's refusal.
 */
export class ReplayWindowError extends MessagingError {
  constructor(
    /** What is wrong with the window, e.g. `partition 1 ends at 50, before 51`. */
    readonly reason: string,
  ) {
    super(`Replay window refused: ${reason}`);
    this.name = 'ReplayWindowError';
  }
}
