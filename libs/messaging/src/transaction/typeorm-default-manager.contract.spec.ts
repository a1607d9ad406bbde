/**
 * The TypeORM internals `joinDefaultManager` (typeorm-default-manager.patch.ts) relies on, checked against
 * the installed TypeORM without a database: the default `EntityManager` reads `this.queryRunner` on every
 * call and lets it be redefined, repositories go through their manager, and `getRepository()` hands a new
 * repository the manager's query runner of that moment (why the patch makes repositories outside the async
 * context). If an upgrade of TypeORM changes any of this, a test here fails and names the assumption:
 * revisit the patch before upgrading.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { DataSource, EntityManager, EntitySchema, QueryRunner } from 'typeorm';
import { TransactionScope } from './transaction-scope';
import { joinDefaultManager } from './typeorm-default-manager.patch';

const Row = new EntitySchema<{ id: number }>({
  name: 'contract_row',
  columns: { id: { type: Number, primary: true } },
});

/** A DataSource never initialised (no database); its `query` records the query runner it was given. */
function recordingDataSource() {
  const dataSource = new DataSource({ type: 'postgres', entities: [Row] });
  const runners: Array<QueryRunner | undefined> = [];
  dataSource.query = (async (_query: string, _parameters?: unknown[], queryRunner?: QueryRunner) => {
    runners.push(queryRunner);
    return [];
  }) as DataSource['query'];
  return { dataSource, runners };
}

const fakeRunner = (name: string) => ({ name }) as unknown as QueryRunner;
const scopeOf = (queryRunner: QueryRunner) =>
  ({ queryRunner, manager: {} as EntityManager, afterCommit: [] }) as TransactionScope;

describe('TypeORM internals the default-manager patch relies on', () => {
  it('is a TypeORM line the patch was written against (0.3 or 1.x)', () => {
    const typeormDir = path.dirname(require.resolve('typeorm'));
    const { version } = JSON.parse(readFileSync(path.join(typeormDir, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version).toMatch(/^(0\.3|1)\./);
  });

  it("lets the default manager's queryRunner be redefined (an own, configurable property, or none)", () => {
    const { dataSource } = recordingDataSource();
    const descriptor = Object.getOwnPropertyDescriptor(dataSource.manager, 'queryRunner');
    expect(descriptor === undefined || descriptor.configurable).toBe(true);
  });

  it('reads this.queryRunner on each call of the manager and of its repositories', async () => {
    const { dataSource, runners } = recordingDataSource();
    const storage = new AsyncLocalStorage<TransactionScope>();
    joinDefaultManager(dataSource, storage);
    const repository = dataSource.getRepository(Row);
    const inside = fakeRunner('transaction');

    await dataSource.manager.query('select 1');
    await storage.run(scopeOf(inside), async () => {
      await dataSource.manager.query('select 1');
      await repository.query('select 1');
    });
    await repository.query('select 1');

    expect(runners).toEqual([undefined, inside, inside, undefined]);
  });

  it("hands a new repository the manager's query runner of that moment, and keeps it (why the patch makes repositories outside the context)", () => {
    const { dataSource } = recordingDataSource();
    const runner = fakeRunner('captured');
    const manager = dataSource.createEntityManager(runner);
    const repository = manager.getRepository(Row);
    expect(repository.queryRunner).toBe(runner);
    expect(repository.manager).toBe(manager);
    expect(manager.getRepository(Row)).toBe(repository);
  });

  it('makes the default manager’s repositories without a transaction’s query runner, even inside one', () => {
    const { dataSource } = recordingDataSource();
    const storage = new AsyncLocalStorage<TransactionScope>();
    joinDefaultManager(dataSource, storage);
    const repository = storage.run(scopeOf(fakeRunner('transaction')), () => dataSource.getRepository(Row));
    expect(repository.queryRunner).toBeUndefined();
    expect(repository.manager).toBe(dataSource.manager);
  });
});
