import { EntityManager, QueryRunner } from 'typeorm';

/** One open database transaction and what waits for its commit. */
export interface TransactionScope {
  readonly queryRunner: QueryRunner;
  readonly manager: EntityManager;
  /** Run after a successful commit (e.g. wake the outbox relay). */
  readonly afterCommit: Array<() => void>;
}
