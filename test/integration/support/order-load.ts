import { TestingModule } from '@nestjs/testing';
import { OrdersService } from './orders.fixture';

/**
 * A steady writer of orders: one at a time, `seq` 1, 2, 3… (the order's amount and its event's `seq`), each
 * customer's orders in increasing `seq`. A write that fails (the database restarting) is counted and the load
 * goes on; whether it committed is read from the database afterwards.
 */
export class OrderLoad {
  private seq = 0;
  private running?: Promise<void>;
  private stopping = false;
  failures = 0;

  constructor(
    /** The app whose OrdersService writes; may be switched while the load runs. */
    public target: TestingModule,
    private readonly customers: number,
    private readonly intervalMs: number,
  ) {}

  /** Orders attempted so far. */
  get attempted(): number {
    return this.seq;
  }

  start(): this {
    this.running = this.loop();
    return this;
  }

  /** Places `count` more orders, then resolves (the load keeps running). */
  async waitForMore(count: number): Promise<void> {
    const until = this.seq + count;
    while (this.seq < until && !this.stopping) await sleep(this.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.seq += 1;
      const seq = this.seq;
      try {
        await this.target.get(OrdersService).place(`customer-${seq % this.customers}`, seq, seq);
      } catch {
        this.failures += 1;
      }
      await sleep(this.intervalMs);
    }
  }
}

/** What reached the consumer of the orders, against what committed. */
export interface DeliveryVerdict {
  readonly committed: number;
  /** Committed orders (by seq) with no handled row. */
  readonly lost: number[];
  /** Orders handled (committed) more than once. */
  readonly appliedTwice: number[];
  /** Per customer, a seq handled after a higher one. */
  readonly outOfOrder: string[];
}

interface Queryable {
  query<R extends object>(sql: string, params?: unknown[]): Promise<R[]>;
}

/**
 * Compares the orders that committed (the writer's `orders` table) with what the consumer group handled
 * (`handled_orders`, written in the handler's transaction with the inbox record): nothing lost, nothing
 * applied twice, each customer in order.
 */
export async function deliveryVerdict(
  writer: Queryable,
  consumer: Queryable,
  group: string,
): Promise<DeliveryVerdict> {
  const committed = await writer.query<{ amount: number; customer: string }>(
    'select amount, customer from orders',
  );
  const handled = await consumer.query<{ seq: number; customer: string }>(
    'select seq, customer from handled_orders where consumer_group = $1 order by id',
    [group],
  );
  const counts = new Map<number, number>();
  handled.forEach((h) => counts.set(h.seq, (counts.get(h.seq) ?? 0) + 1));
  const lastOf = new Map<string, number>();
  const outOfOrder: string[] = [];
  for (const h of handled) {
    const last = lastOf.get(h.customer) ?? 0;
    if (h.seq < last) outOfOrder.push(`${h.customer}: ${h.seq} after ${last}`);
    lastOf.set(h.customer, Math.max(last, h.seq));
  }
  return {
    committed: committed.length,
    lost: committed.filter((c) => !counts.has(c.amount)).map((c) => c.amount),
    appliedTwice: [...counts].filter(([, n]) => n > 1).map(([seq]) => seq),
    outOfOrder,
  };
}

/** Waits until every committed order was handled (or `timeoutMs` passed); returns the verdict then. */
export async function settledVerdict(
  writer: Queryable,
  consumer: Queryable,
  group: string,
  timeoutMs = 60_000,
): Promise<DeliveryVerdict> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const verdict = await deliveryVerdict(writer, consumer, group);
    if (verdict.lost.length === 0 || Date.now() > deadline) return verdict;
    await sleep(200);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
