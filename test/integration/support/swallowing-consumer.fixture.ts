import { Injectable, Type } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { InjectRepository } from '@nestjs/typeorm';
import { Column, Entity, EntityManager, PrimaryColumn, PrimaryGeneratedColumn, Repository } from 'typeorm';
import { z } from 'zod';
import {
  IdempotentHandler,
  MessageContext,
  MessagingMetrics,
  MessagingModuleOptions,
  TransportOptions,
} from 'nest-reliable-messaging';
import { TestDatabase, TestDialect } from '../../harness/test-database';
import { DeadlockBallast, DeadlockRow, InnodbDeadlock, isDeadlock } from './innodb-deadlock';
import { createMessagingApp } from './messaging-app';
import { OrderPlacedEvent, orderPlaced, orderPlacedSchema } from './orders.fixture';

/** The orders each swallowed-error suite sends, by `seq`. */
export const SEQS = Array.from({ length: 200 }, (_, i) => i + 1);
/** Every tenth message's handler swallows a database error that ended its transaction. */
export const SWALLOWING = SEQS.filter((seq) => seq % 10 === 0);
/** The others, which must be applied once each. */
export const OTHERS = SEQS.filter((seq) => seq % 10 !== 0);

/** What a swallowing consumer wrote: one row per message it handled. */
@Entity({ name: 'swallow_applied' })
export class AppliedOrder {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'integer' })
  seq!: number;

  @Column({ name: 'consumer_group', type: 'varchar', length: 200 })
  group!: string;
}

/** Keys that exist before the messages arrive: inserting one again is a unique violation. */
@Entity({ name: 'swallow_taken' })
export class TakenKey {
  @PrimaryColumn({ type: 'varchar', length: 200 })
  key!: string;
}

/** Makes a database statement fail inside the handler's transaction (and lets the handler catch it). */
export type FailingStatement = (manager: EntityManager, key: string) => Promise<void>;

/** Steers a swallowing consumer from the test. */
export class SwallowProbe {
  /** Every handler call waits for this first (so that messages pile up into batches). */
  gate: Promise<void> = Promise.resolve();
  /** Handler calls per seq. */
  readonly calls = new Map<number, number>();
  /** The database errors the handlers caught and swallowed. */
  readonly swallowed: unknown[] = [];
}

type OrderPayload = z.output<typeof orderPlacedSchema>;

/**
 * A consumer that writes a row for every message and, for every tenth one, then runs a statement that
 * fails and swallows its error: the "it is already there" pattern (catch a unique violation and return).
 */
export function swallowingConsumer(event: OrderPlacedEvent, group: string, failing: FailingStatement): Type {
  @Injectable()
  class SwallowingConsumer {
    constructor(
      @InjectRepository(AppliedOrder) private readonly applied: Repository<AppliedOrder>,
      private readonly probe: SwallowProbe,
    ) {}

    @IdempotentHandler(event, { group })
    async onOrderPlaced(order: OrderPayload, context: MessageContext): Promise<void> {
      const seq = order.seq ?? -1;
      this.probe.calls.set(seq, (this.probe.calls.get(seq) ?? 0) + 1);
      await this.probe.gate;
      await this.applied.insert({ seq, group: context.group });
      if (seq % 10 !== 0) return;
      try {
        await failing(context.manager, `${context.group}:${seq}`);
      } catch (error) {
        this.probe.swallowed.push(error);
        return; // "already there": the handler believes it is done
      }
    }
  }
  return SwallowingConsumer;
}

/** Messages of `group` counted as handled, duplicate or dead-lettered so far (from the app's metrics). */
export async function settledCount(app: TestingModule, group: string): Promise<number> {
  const text = await app.get(MessagingMetrics).metrics();
  const counted = [
    ...text.matchAll(/^messaging_(consumer_messages|dead_lettered)_total\{([^}]*)\} (\d+)$/gm),
  ];
  return counted
    .filter(([, , labels]) => labels.includes(`group="${group}"`))
    .reduce((sum, [, , , count]) => sum + Number(count), 0);
}

/**
 * The failure a swallowing handler provokes: on PostgreSQL a unique violation (its key is taken before the
 * messages arrive); on MariaDB a real deadlock, the handler's transaction its victim. `close()` after the suite.
 */
export class SwallowedFailure {
  private deadlock?: InnodbDeadlock;

  constructor(private readonly dialect: TestDialect) {}

  /** The failing statement, as the consumer runs it. */
  readonly failing: FailingStatement = async (manager, key) => {
    if (this.dialect === 'postgres') await manager.insert(TakenKey, { key });
    else await (this.deadlock as InnodbDeadlock).provoke(manager, key);
  };

  /** Prepares the failure of each swallowing message of `group` (its key taken, or its deadlock). */
  async prepare(schema: TestDatabase, group: string): Promise<void> {
    const keys = SWALLOWING.map((seq) => `${group}:${seq}`);
    if (this.dialect === 'postgres') {
      for (const key of keys) await schema.query('insert into swallow_taken (key) values ($1)', [key]);
    } else {
      this.deadlock ??= new InnodbDeadlock(schema);
      await this.deadlock.prepare(keys);
    }
  }

  /** The failure code a parked swallowing message carries (`msg.failure-code`). */
  get failureCode(): string {
    return `TransactionAbortedError/${this.dialect === 'postgres' ? '23505' : 'ER_LOCK_DEADLOCK'}`;
  }

  async close(): Promise<void> {
    await this.deadlock?.close();
  }
}

/** What a swallowing app is started with. */
export interface SwallowingAppOptions {
  readonly schema: TestDatabase;
  readonly transport: TransportOptions;
  readonly destination: string;
  readonly group: string;
  readonly failure: SwallowedFailure;
  readonly consumers?: MessagingModuleOptions['consumers'];
}

/**
 * An app with a swallowing consumer of `destination` in `group` (no relay), its failures prepared, whose
 * handlers all wait until `open()` (so that the messages pile up into batches first).
 */
export async function startSwallowingApp(options: SwallowingAppOptions) {
  const probe = new SwallowProbe();
  let open = () => undefined as void;
  probe.gate = new Promise<void>((resolve) => (open = resolve));
  const app = await createMessagingApp({
    schema: options.schema,
    transport: options.transport,
    entities: [AppliedOrder, TakenKey, DeadlockRow, DeadlockBallast],
    providers: [
      { provide: SwallowProbe, useValue: probe },
      swallowingConsumer(orderPlaced(options.destination), options.group, options.failure.failing),
    ],
    messaging: { relay: { enabled: false }, ...(options.consumers ? { consumers: options.consumers } : {}) },
  });
  try {
    await options.failure.prepare(options.schema, options.group);
  } catch (error) {
    await app.close();
    throw error;
  }
  return { app, probe, open };
}

/** The other messages were applied, each once; each customer's (`seq % 5`) in order. */
export async function expectOthersApplied(schema: TestDatabase, group: string): Promise<void> {
  const rows = await schema.query<{ seq: number }>(
    'select seq from swallow_applied where consumer_group = $1 order by id',
    [group],
  );
  const applied = rows.map((row) => Number(row.seq));
  expect([...applied].sort((a, b) => a - b)).toEqual(OTHERS);
  for (let customer = 0; customer < 5; customer++) {
    const ofCustomer = applied.filter((seq) => seq % 5 === customer);
    expect(ofCustomer).toEqual([...ofCustomer].sort((a, b) => a - b));
  }
}

/**
 * The swallowing messages, and only those, were dead-lettered, classified as the error the handler
 * swallowed and named so (never its text); no other handler ran more than twice (at most once more because
 * of a neighbour); the handlers swallowed what the suite says (on MariaDB: deadlocks, ours the victim).
 */
export function expectSwallowedParked(
  parked: ReadonlyArray<{ seq: number; code: string | undefined }>,
  failure: SwallowedFailure,
  probe: SwallowProbe,
  dialect: TestDialect,
): void {
  expect(parked.map((p) => p.seq).sort((a, b) => a - b)).toEqual(SWALLOWING);
  expect([...new Set(parked.map((p) => p.code))]).toEqual([failure.failureCode]);
  for (const seq of OTHERS) expect(probe.calls.get(seq)).toBeLessThanOrEqual(2);
  expect(probe.swallowed.length).toBeGreaterThanOrEqual(SWALLOWING.length);
  if (dialect === 'mariadb') expect(probe.swallowed.filter((e) => !isDeadlock(e)).map(String)).toEqual([]);
}
