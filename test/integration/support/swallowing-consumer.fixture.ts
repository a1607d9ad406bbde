import { Injectable, Type } from '@nestjs/common';
import { TestingModule } from '@nestjs/testing';
import { InjectRepository } from '@nestjs/typeorm';
import { Column, Entity, EntityManager, PrimaryColumn, PrimaryGeneratedColumn, Repository } from 'typeorm';
import { z } from 'zod';
import { IdempotentHandler, MessageContext, MessagingMetrics } from 'nest-reliable-messaging';
import { OrderPlacedEvent, orderPlacedSchema } from './orders.fixture';

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
