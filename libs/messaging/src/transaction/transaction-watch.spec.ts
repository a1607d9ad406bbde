import { DataSource, QueryFailedError, QueryRunner } from 'typeorm';
import type { AfterQueryEvent } from 'typeorm';
import { TransactionAbortedError } from '../errors/transaction-aborted.error';
import { TransactionWatch } from './transaction-watch';
import { TransactionWatcher } from './transaction-watcher';

/** A statement the server refused, as TypeORM raises it (node-postgres: a DatabaseError with a severity). */
function refused(code: string, message = 'duplicate key value violates unique constraint'): QueryFailedError {
  return new QueryFailedError('insert …', [], Object.assign(new Error(message), { code, severity: 'ERROR' }));
}

describe(TransactionWatch.name, () => {
  describe('on PostgreSQL', () => {
    it('takes a refused statement for the end of the transaction, and names it', () => {
      const watch = new TransactionWatch('postgres');
      const error = refused('23505');
      expect(watch.failed(error)).toBe(false);
      const aborted = watch.aborted();
      expect(aborted).toBeInstanceOf(TransactionAbortedError);
      expect(aborted?.databaseError).toBe(error);
      expect(aborted?.message).toContain('QueryFailedError/23505: duplicate key value');
    });

    it('refuses every later statement but a rollback, before it reaches the database', () => {
      const watch = new TransactionWatch('postgres');
      watch.failed(refused('23505'));
      expect(() => watch.beforeStatement('INSERT INTO "orders" …')).toThrow(TransactionAbortedError);
      expect(() => watch.beforeStatement('ROLLBACK TO SAVEPOINT typeorm_1')).not.toThrow();
      expect(() => watch.beforeStatement('rollback')).not.toThrow();
    });

    it('is usable again after a rollback to a savepoint (an error caught in a nested transaction)', () => {
      const watch = new TransactionWatch('postgres');
      watch.failed(refused('23505'));
      watch.succeeded('ROLLBACK TO SAVEPOINT typeorm_1', { command: 'ROLLBACK' });
      expect(watch.aborted()).toBeUndefined();
      expect(() => watch.beforeStatement('INSERT …')).not.toThrow();
    });

    it('keeps the first error: a later one while aborted (25P02) does not replace it', () => {
      const watch = new TransactionWatch('postgres');
      const first = refused('23505');
      watch.failed(first);
      watch.failed(refused('25P02', 'current transaction is aborted'));
      expect(watch.aborted()?.databaseError).toBe(first);
    });

    it('does not take an error of the client, before anything was sent, for an aborted transaction', () => {
      const watch = new TransactionWatch('postgres');
      watch.failed(
        new QueryFailedError('insert …', [], new TypeError('Do not know how to serialize a BigInt')),
      );
      expect(watch.aborted()).toBeUndefined();
    });

    it('notices a COMMIT answered with the command tag ROLLBACK', () => {
      const watch = new TransactionWatch('postgres');
      watch.succeeded('COMMIT', { command: 'ROLLBACK' });
      expect(watch.commitRolledBack).toBe(true);
      const committed = new TransactionWatch('postgres');
      committed.succeeded('COMMIT', { command: 'COMMIT' });
      expect(committed.commitRolledBack).toBe(false);
    });
  });

  describe('explain', () => {
    it("turns PostgreSQL's 25P02 after a swallowed error into a TransactionAbortedError naming the first", () => {
      const watch = new TransactionWatch('postgres');
      const first = refused('23505');
      watch.failed(first);
      const explained = watch.explain(refused('25P02', 'current transaction is aborted'));
      expect(explained).toBeInstanceOf(TransactionAbortedError);
      expect((explained as TransactionAbortedError).databaseError).toBe(first);
    });

    it('leaves the first error as it is when the code rethrows it (as TypeORM wraps it again)', () => {
      const watch = new TransactionWatch('postgres');
      const first = refused('23505');
      watch.failed(first);
      const rethrown = new QueryFailedError('insert …', [], first.driverError);
      expect(watch.explain(rethrown)).toBe(rethrown);
    });

    it("leaves the code's own errors as they are", () => {
      const watch = new TransactionWatch('postgres');
      watch.failed(refused('23505'));
      const own = new Error('order already shipped');
      expect(watch.explain(own)).toBe(own);
      expect(new TransactionWatch('postgres').explain(own)).toBe(own);
    });
  });

  describe('on MySQL and MariaDB', () => {
    it('asks the server after a failed statement, and keeps the transaction when it is still open', () => {
      const watch = new TransactionWatch('mysql');
      const duplicate = refused('ER_DUP_ENTRY');
      expect(watch.failed(duplicate)).toBe(true);
      watch.probed(duplicate, true);
      expect(watch.aborted()).toBeUndefined();
      expect(() => watch.beforeStatement('INSERT …')).not.toThrow();
    });

    it('takes a deadlock that ended the transaction for its end, and refuses what would autocommit', () => {
      const watch = new TransactionWatch('mysql');
      const deadlock = refused('ER_LOCK_DEADLOCK', 'Deadlock found when trying to get lock');
      watch.probed(deadlock, false);
      expect(watch.aborted()?.databaseError).toBe(deadlock);
      expect(() => watch.beforeStatement('INSERT INTO `messaging_outbox` …')).toThrow(/ER_LOCK_DEADLOCK/);
      expect(() => watch.beforeStatement('ROLLBACK')).not.toThrow();
      expect(watch.failed(refused('ER_DUP_ENTRY'))).toBe(false); // ended: nothing more to ask
    });
  });
});

describe(TransactionWatcher.name, () => {
  /** A query runner whose `DO 0` answers with `serverStatus`, or fails. */
  function queryRunner(serverStatus: number | Error): QueryRunner & { probes: number } {
    const runner = {
      probes: 0,
      query: async () => {
        runner.probes += 1;
        if (serverStatus instanceof Error) throw serverStatus;
        return { serverStatus };
      },
    };
    return runner as unknown as QueryRunner & { probes: number };
  }

  function failedEvent(runner: QueryRunner, error: Error): AfterQueryEvent {
    return {
      queryRunner: runner,
      query: 'UPDATE …',
      parameters: [],
      success: false,
      error,
    } as unknown as AfterQueryEvent;
  }

  it('subscribes to the DataSource once, and ends it', () => {
    const dataSource = { subscribers: [] as unknown[] } as unknown as DataSource;
    const watcher = new TransactionWatcher();
    watcher.attach(dataSource);
    watcher.attach(dataSource);
    expect(dataSource.subscribers).toEqual([watcher]);
    watcher.detach(dataSource);
    expect(dataSource.subscribers).toEqual([]);
  });

  it('watches only the query runners of the transactions it was given', async () => {
    const watcher = new TransactionWatcher();
    const runner = queryRunner(0);
    await watcher.afterQuery(failedEvent(runner, new Error('deadlock')));
    expect(runner.probes).toBe(0);
    expect(() => watcher.beforeQuery({ queryRunner: runner, query: 'INSERT …' } as never)).not.toThrow();
    expect(watcher.watch(runner, 'sqlite')).toBeUndefined();
  });

  it.each([
    ['the in-transaction flag cleared (a deadlock rolled it back)', 0x0002, true],
    ['the in-transaction flag set (a statement-level error)', 0x0003, false],
    ['no answer (the connection is gone)', new Error('connection lost'), true],
  ])('on MariaDB, probes after a failed statement: %s', async (_, status, ended) => {
    const watcher = new TransactionWatcher();
    const runner = queryRunner(status);
    const watch = watcher.watch(runner, 'mariadb') as TransactionWatch;
    await watcher.afterQuery(failedEvent(runner, Object.assign(new Error('failed'), { code: 'ER_X' })));
    expect(runner.probes).toBe(1);
    expect(watch.aborted() !== undefined).toBe(ended);
    const next = () => watcher.beforeQuery({ queryRunner: runner, query: 'INSERT …' } as never);
    if (ended) expect(next).toThrow(TransactionAbortedError);
    else expect(next).not.toThrow();
  });

  it('on PostgreSQL, reads the command tag of COMMIT', async () => {
    const watcher = new TransactionWatcher();
    const runner = queryRunner(0);
    const watch = watcher.watch(runner, 'postgres') as TransactionWatch;
    await watcher.afterQuery({
      queryRunner: runner,
      query: 'COMMIT',
      success: true,
      rawResults: { command: 'ROLLBACK' },
    } as unknown as AfterQueryEvent);
    expect(watch.commitRolledBack).toBe(true);
    expect(runner.probes).toBe(0);
  });
});
