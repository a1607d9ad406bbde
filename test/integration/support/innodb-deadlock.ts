import { createPool, Pool } from 'mysql2/promise';
import { Column, Entity, EntityManager, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { TestDatabase } from '../../harness/test-database';

/** Two rows per deadlock, `<name>:a` and `<name>:b`, that two transactions lock in opposite order. */
@Entity({ name: 'deadlock_rows' })
export class DeadlockRow {
  @PrimaryColumn({ type: 'varchar', length: 200 })
  id!: string;

  @Column({ type: 'integer', default: 0 })
  n!: number;
}

/** Rows the other transaction writes so that InnoDB finds it heavier and picks ours as the victim. */
@Entity({ name: 'deadlock_ballast' })
export class DeadlockBallast {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'integer' })
  n!: number;
}

/** Rows the other transaction writes first: InnoDB rolls back the transaction of lesser weight. */
const BALLAST_ROWS = 5_000;

/**
 * Real InnoDB deadlocks on demand (MariaDB / MySQL), with the caller's transaction as the victim: InnoDB
 * then rolls that whole transaction back, and the session's later statements autocommit.
 */
export class InnodbDeadlock {
  private readonly pool: Pool;

  constructor(database: TestDatabase) {
    if (database.dialect !== 'mariadb') throw new Error('InnoDB deadlocks need MariaDB');
    this.pool = createPool({ uri: database.connection.url, connectionLimit: 8 });
  }

  /** Creates the two rows of the deadlock `name` (once, before `provoke`). */
  async prepare(names: readonly string[]): Promise<void> {
    const rows = names.flatMap((name) => [`${name}:a`, `${name}:b`]);
    await this.pool.query(
      `insert into deadlock_rows (id, n) values ${rows.map(() => '(?, 0)').join(', ')}`,
      rows,
    );
  }

  /**
   * In the victim's transaction: locks row a; another, heavier transaction locks row b and waits for a;
   * then the victim asks for b. InnoDB breaks the cycle by rolling back the victim's transaction: the
   * returned promise rejects with the driver's ER_LOCK_DEADLOCK (as a TypeORM QueryFailedError).
   */
  async provoke(victim: EntityManager, name: string): Promise<void> {
    // Outside a transaction (its statements autocommit) the victim would hold no lock and wait for ever.
    const [{ open }] = await victim.query<Array<{ open: number }>>('select @@in_transaction as open');
    if (Number(open) !== 1) {
      throw new Error('the victim runs outside a transaction: its statements autocommit');
    }
    await victim.query('update deadlock_rows set n = n + 1 where id = ?', [`${name}:a`]);
    const other = await this.pool.getConnection();
    try {
      await other.query('start transaction');
      // MariaDB's SEQUENCE engine: a table of the numbers 1..n.
      await other.query(`insert into deadlock_ballast (n) select seq from seq_1_to_${BALLAST_ROWS}`);
      await other.query('update deadlock_rows set n = n + 1 where id = ?', [`${name}:b`]);
      const waiting = other.query('update deadlock_rows set n = n + 1 where id = ?', [`${name}:a`]);
      try {
        await victim.query('update deadlock_rows set n = n + 1 where id = ?', [`${name}:b`]);
      } finally {
        // The victim rolled back and released row a: the other transaction gets it, then rolls back.
        await waiting.catch(() => undefined);
      }
      throw new Error('test setup: InnoDB chose the other transaction as the deadlock victim');
    } finally {
      await other.query('rollback').catch(() => undefined);
      other.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** True for MariaDB's / MySQL's deadlock error (errno 1213), raw or wrapped by TypeORM. */
export function isDeadlock(error: unknown): boolean {
  const driverError = (error as { driverError?: { errno?: number } }).driverError ?? error;
  return (driverError as { errno?: number }).errno === 1213;
}
