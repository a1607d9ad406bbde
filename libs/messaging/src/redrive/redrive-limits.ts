/** Redrive limits (docs/guide/08-redrive.md). */
export const RedriveLimits = {
  /** At most this many messages per redrive batch. */
  MAX_BATCH: 100,
  /** An approval's validity when none is given: 15 minutes. */
  DEFAULT_APPROVAL_TTL_MS: 15 * 60_000,
  /** The longest validity an approval may have: 24 hours. */
  MAX_APPROVAL_TTL_MS: 24 * 60 * 60_000,
  /** Clock difference tolerated between the machine that approved and the one that runs, ms. */
  CLOCK_SKEW_MS: 60_000,
  /**
   * How many messages from the head a selection, a search or the console's paged view reads at most: a
   * plan for a group or for picked ids looks this far into the DLQ.
   */
  MAX_SCAN: 5_000,
  /**
   * Bytes one read of dead letters (a page, a search, a plan's scan) holds at most, bodies, keys and headers
   * together: 16 MiB. The read stops there and says how many it left (`ReadCutOff`).
   */
  READ_BUDGET_BYTES: 16 * 1024 * 1024,
  /** How long reading a Kafka dead-letter topic may take before the read fails, ms. */
  KAFKA_READ_TIMEOUT_MS: 30_000,
  /**
   * How long a Kafka redrive waits for the broker to confirm one copy, ms: past it the copy is NOT_CONFIRMED
   * (ambiguous), its partition stops there, and the execute answers instead of hanging on a client's retries.
   */
  KAFKA_PUBLISH_TIMEOUT_MS: 30_000,
  /** The largest edited payload an edit plan takes, bytes (the plan carries it whole): 256 KiB. */
  MAX_EDIT_BYTES: 256 * 1024,
} as const;
