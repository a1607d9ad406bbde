import { Client } from 'pg';
import { openClient } from './databases';
import { OutboxRecord, outboxTable, RECORD_COLUMNS, toWireMessage } from './outbox-fill';
import { TransportKind } from './plan';
import { rawPublisher, RawPublisher } from './raw-publishers';

/**
 * The blog post's relay, the baseline of the latency and idle figures: every second (a fixed poll) read the
 * unsent rows, publish them, mark them sent. Fairer than the post in one respect: it waits for the broker's
 * confirmation (the same guarantee as the library) instead of firing and forgetting. It drains the backlog
 * in batches within one tick; ticks never overlap. Works on the library's outbox table.
 */
export class BlogPollRelay {
  private client?: Client;
  private publisher?: RawPublisher;
  private timer?: NodeJS.Timeout;
  private tick?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly kind: TransportKind,
    private readonly databaseUrl: string,
    private readonly schema: string,
    private readonly intervalMs = 1_000,
    private readonly batchSize = 200,
  ) {}

  async start(): Promise<this> {
    this.client = await openClient(this.databaseUrl);
    this.publisher = await rawPublisher(this.kind);
    this.timer = setInterval(() => {
      this.tick ??= this.poll()
        .catch((error: Error) => console.error(`Blog relay: ${error.message}`))
        .finally(() => (this.tick = undefined));
    }, this.intervalMs);
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.tick;
    await this.publisher?.close();
    await this.client?.end().catch(() => undefined);
  }

  private async poll(): Promise<void> {
    const client = this.client as Client;
    const publisher = this.publisher as RawPublisher;
    for (;;) {
      const { rows } = await client.query<OutboxRecord>(
        `select ${RECORD_COLUMNS} from ${outboxTable(this.schema)} where sent_at is null order by id limit $1`,
        [this.batchSize],
      );
      if (rows.length === 0 || this.stopped) return;
      await publisher.publish(rows.map(toWireMessage));
      await client.query(
        `update ${outboxTable(this.schema)} set sent_at = now() where id = any($1::bigint[])`,
        [rows.map((r) => r.id)],
      );
      if (rows.length < this.batchSize) return;
    }
  }
}
