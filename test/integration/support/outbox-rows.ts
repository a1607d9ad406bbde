import { TestDatabase } from '../../harness/test-database';

/** An outbox row as the outbox suites inspect it (read with SQL, independently of the library). */
export interface OutboxRowState {
  readonly id: string;
  readonly messageId: string;
  readonly destination: string;
  readonly key: string;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly lockedBy: string | null;
  readonly lockedUntil: Date | null;
  readonly sentAt: Date | null;
  readonly createdAt: Date;
}

interface RawRow {
  id: string | number;
  message_id: string;
  destination: string;
  key: string;
  attempts: number;
  last_error: string | null;
  locked_by: string | null;
  locked_until: Date | null;
  sent_at: Date | null;
  created_at: Date;
}

/** Every outbox row of the suite's schema or database, in id order. */
export async function readOutboxRows(db: TestDatabase): Promise<OutboxRowState[]> {
  const rows = await db.query<RawRow>(
    `select id, message_id, destination, ${db.quote('key')}, attempts, last_error, locked_by, locked_until,
            sent_at, created_at
     from messaging_outbox order by id`,
  );
  return rows.map((r) => ({
    id: String(r.id),
    messageId: r.message_id,
    destination: r.destination,
    key: r.key,
    attempts: r.attempts,
    lastError: r.last_error,
    lockedBy: r.locked_by,
    lockedUntil: r.locked_until,
    sentAt: r.sent_at,
    createdAt: r.created_at,
  }));
}

/**
 * Polls `probe` until it returns something other than `undefined` or `false`, and returns that; rejects
 * with `what` after `timeoutMs` (a caller that wants what it last saw in the message keeps it itself).
 * Integration tests wait for conditions, not time.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Percentile of a list of numbers (nearest rank). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
