import { DataSource, QueryFailedError, QueryRunner } from 'typeorm';

/** `DATE_FORMAT` pattern that renders a UTC `datetime(6)` as ISO 8601: read independently of the driver's timezone. */
export const UTC_ISO = "'%Y-%m-%dT%H:%i:%s.%fZ'";

/** A Date as a UTC `datetime` literal, for a parameter (the driver's own conversion uses its timezone option). */
export function utcDatetime(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', '');
}

/** A column read through `UTC_ISO`. */
export function parseUtc(text: string): Date {
  return new Date(text);
}

/**
 * bigint ids, checked and inlined as a list for `in (…)`: they come from the table, and a list of numbers
 * compares as numbers (the driver would quote strings).
 */
export function idList(ids: readonly string[]): string {
  const bad = ids.find((id) => !/^\d{1,20}$/.test(id));
  if (bad !== undefined) throw new TypeError(`Not an outbox row id: '${bad}'`);
  return ids.join(', ');
}

/** Rows an UPDATE or DELETE changed (the driver answers them with a result header). */
export function affectedRows(result: unknown): number {
  return Number((result as { affectedRows?: number }).affectedRows ?? 0);
}

/** True for a duplicate key (ER_DUP_ENTRY, 1062). */
export function isDuplicateKey(error: unknown): boolean {
  return error instanceof QueryFailedError && (error.driverError as { errno?: number }).errno === 1062;
}

/** Runs `work` on a connection of its own from the DataSource's pool. */
export async function withConnection<T>(
  dataSource: DataSource,
  work: (queryRunner: QueryRunner) => Promise<T>,
): Promise<T> {
  const queryRunner = dataSource.createQueryRunner('master');
  try {
    await queryRunner.connect();
    return await work(queryRunner);
  } finally {
    await queryRunner.release();
  }
}

/**
 * Runs `work` in a READ COMMITTED transaction on `queryRunner`. InnoDB's default, REPEATABLE READ, locks the
 * gaps a range scan passes, and a new pending row is inserted into exactly such a gap: a claim or a purge
 * in that level would hold up the applications' inserts.
 */
export async function readCommitted<T>(queryRunner: QueryRunner, work: () => Promise<T>): Promise<T> {
  await queryRunner.startTransaction('READ COMMITTED');
  try {
    const result = await work();
    await queryRunner.commitTransaction();
    return result;
  } catch (error) {
    if (queryRunner.isTransactionActive) await queryRunner.rollbackTransaction().catch(() => undefined);
    throw error;
  }
}

/** `readCommitted` on a connection of its own. */
export function inReadCommitted<T>(
  dataSource: DataSource,
  work: (queryRunner: QueryRunner) => Promise<T>,
): Promise<T> {
  return withConnection(dataSource, (queryRunner) => readCommitted(queryRunner, () => work(queryRunner)));
}
