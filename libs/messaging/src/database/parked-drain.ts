import { DataSource, QueryRunner } from 'typeorm';
import { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';
import { ParkedDelivery, parkedDelivery, ParkedRow } from '../inbox/parked-store';

/** What a database's SQL gives the drain of a parked lane (`ParkedStore.drain`). */
export interface ParkedDrainSql {
  /** The transaction's isolation level; the database's default when undefined. */
  readonly isolation?: IsolationLevel;
  /** Reads and locks the lane's first rows, in id order, without waiting for another transaction's lock. */
  lock(runner: QueryRunner): Promise<ParkedRow[]>;
  /** True for the database's answer that a row is locked by another transaction (NOWAIT). */
  isLockNotAvailable(error: unknown): boolean;
  /** Deletes rows by id, in the drain's transaction. */
  remove(runner: QueryRunner, ids: readonly string[]): Promise<void>;
}

/**
 * The drain of a parked lane on any database: in one transaction, lock the rows (undefined when another
 * transaction holds them), hand them to `work`, delete the ids it returns, commit.
 */
export async function drainParked(
  dataSource: DataSource,
  sql: ParkedDrainSql,
  work: (parked: readonly ParkedDelivery[]) => Promise<readonly string[]>,
): Promise<{ taken: number; deleted: number } | undefined> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.connect();
    await runner.startTransaction(sql.isolation);
    let rows: ParkedRow[];
    try {
      rows = await sql.lock(runner);
    } catch (error) {
      await runner.rollbackTransaction();
      if (sql.isLockNotAvailable(error)) return undefined;
      throw error;
    }
    const done = rows.length > 0 ? await work(rows.map(parkedDelivery)) : [];
    if (done.length > 0) await sql.remove(runner, done);
    await runner.commitTransaction();
    return { taken: rows.length, deleted: done.length };
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    throw error;
  } finally {
    await runner.release();
  }
}
