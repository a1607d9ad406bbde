/** How `messaging` exits. */
export const ExitCode = {
  /** Done. */
  OK: 0,
  /** Something failed: a broker error, a bad file, bad usage, or messages that stayed in the DLQ. */
  ERROR: 1,
  /** A redrive guard refused (credential, approval, batch limit, source = target, stale plan). */
  REFUSED: 2,
} as const;
