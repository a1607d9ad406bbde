import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { TransactionScope } from './transaction-scope';

const JOINED = Symbol.for('nest-reliable-messaging.joined-default-manager');

type JoinableManager = EntityManager & { [JOINED]?: true };

/**
 * Makes the DataSource's default EntityManager take part in the transaction of the current async context.
 *
 * The repositories an application injects (`@InjectRepository(Post)`) all run their queries through that
 * one manager, and the manager reads `this.queryRunner` on every call. Inside a transaction started by
 * `TransactionHost.run()` (`@Outbox()`, `@IdempotentHandler()`) the property answers with the transaction's
 * query runner, so `posts.save(post)` commits or rolls back with the outbox row; elsewhere it answers
 * `undefined`, TypeORM's own default, and queries take a pooled connection as before.
 *
 * Only this DataSource's manager object is touched, nothing global. Repositories are created outside the
 * async context so that none can capture a transaction's query runner for good.
 *
 * A patch of TypeORM's internals (its `EntityManager` reads `this.queryRunner` per call, and
 * `getRepository()` hands a new repository the manager's query runner of that moment):
 * `typeorm-default-manager.contract.spec.ts` checks both against the installed TypeORM.
 */
export function joinDefaultManager(
  dataSource: DataSource,
  storage: AsyncLocalStorage<TransactionScope>,
): void {
  const manager = dataSource.manager as JoinableManager;
  if (manager[JOINED]) return;

  Object.defineProperty(manager, 'queryRunner', {
    configurable: true,
    enumerable: false,
    get: () => storage.getStore()?.queryRunner,
  });

  const getRepository = manager.getRepository.bind(manager);
  const getTreeRepository = manager.getTreeRepository.bind(manager);
  manager.getRepository = <T extends ObjectLiteral>(target: EntityTarget<T>) =>
    storage.exit(() => getRepository(target));
  manager.getTreeRepository = <T extends ObjectLiteral>(target: EntityTarget<T>) =>
    storage.exit(() => getTreeRepository(target));
  manager[JOINED] = true;
}
