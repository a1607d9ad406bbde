/**
 * The library's kafkajs consumer settings. What bounds a failover, and the broker settings beside them, is in
 * docs/guide/07-clusters.md.
 */
export const CONSUMER_SETTINGS = {
  /** A fetch with nothing to return waits this long on the broker; a new message ends it at once. */
  maxWaitTimeInMs: 250,
  /**
   * kafkajs retries a failed fetch (a partition leader gone) and a failed commit after 100, 200, 400 ... ms,
   * at most 0.5 s apart, so that it finds a newly elected leader within half a second; after 60 failures in a
   * row (about 30 s) it restarts the consumer. (kafkajs's default waits up to 30 s between tries, the
   * library's earlier 10 s, then 1 s: bench/README.md "Failover on a cluster".)
   */
  retry: { retries: 60, initialRetryTime: 100, maxRetryTime: 500 },
} as const;

/**
 * How often a consumer heartbeats (every second, a third of the session timeout at most), and how long its
 * group coordinator may stay silent before the subscriber replaces the consumer (three heartbeats).
 */
export function consumerTimings(sessionTimeoutMs: number): {
  heartbeatIntervalMs: number;
  coordinatorSilenceMs: number;
} {
  const heartbeatIntervalMs = Math.max(100, Math.min(1_000, Math.floor(sessionTimeoutMs / 3)));
  return { heartbeatIntervalMs, coordinatorSilenceMs: 3 * heartbeatIntervalMs };
}
