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
  /**
   * RabbitMQ: a journal (a stream) says nothing when a reader has caught up with its end; a read that got
   * nothing for this long, ms, is there (finding the journal's last offset, reading up to a window's end).
   */
  JOURNAL_IDLE_MS: 1_000,
  /** RabbitMQ: a read of the journal for a replay's window waits this long for its next message, ms. */
  JOURNAL_READ_TIMEOUT_MS: 30_000,
  /**
   * RabbitMQ: a window by time starts reading the journal this long before its start, ms: the broker's time
   * index is its own clock at chunk grain, the messages' times the publishers'; each message's own is compared.
   */
  JOURNAL_TIME_SLACK_MS: 60_000,
} as const;
