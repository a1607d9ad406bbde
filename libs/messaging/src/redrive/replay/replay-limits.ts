/** Replay limits (docs/guide/08-redrive.md, Replay a window). */
export const ReplayLimits = {
  /** At most this many offsets in one replay's window, all partitions together. */
  MAX_RECORDS: 100_000,
  /** The rate when none is given, copies per second. */
  DEFAULT_RATE_PER_SECOND: 100,
  /** The highest rate a replay may ask for, copies per second. */
  MAX_RATE_PER_SECOND: 10_000,
  /** Records read from the topic at a time: what an execution holds in memory at most. */
  PAGE_RECORDS: 500,
} as const;
