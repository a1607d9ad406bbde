import { TestingModule } from '@nestjs/testing';
import { types } from 'pg';
import { OutboxStore } from 'nest-reliable-messaging/testing';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestDatabase, EACH_DATABASE, postgresOnly, TestDatabase } from '../../harness/test-database';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';

/**
 * The times a claim reads back: `occurredAt` (the `msg.occurred-at` header) and `createdAt` (the relay's
 * commit → publish metric) are the row's own, to the millisecond, truncated like a `Date` read from the
 * column. PostgreSQL's claim reads them as milliseconds since the epoch rather than as text for the
 * driver's date parser (bench/README.md "Relay → Kafka"); MySQL's as text.
 */
describe.each(EACH_DATABASE)('Outbox claim: the row times it reads back (%s)', (_, dialect) => {
  const topic = uniqueName('orders_times');
  const topics = new KafkaTopics();
  let db: TestDatabase;
  let app: TestingModule;

  beforeAll(async () => {
    db = await createTestDatabase(dialect, 'outbox_claimed_times');
    await topics.create(topic);
    app = await createMessagingApp({
      schema: db,
      transport: kafkaTransport(),
      ...ordersWriter(topic),
      messaging: { relay: { enabled: false } },
    });
  });

  afterAll(async () => {
    await app?.close();
    await topics.cleanup();
    await db?.drop();
  });

  it('reads occurred_at and created_at to the millisecond, truncated, before and after 1970', async () => {
    const orders = app.get(OrdersService);
    const cases = [
      { stored: '2026-12-05 06:10:11.123999', iso: '2026-12-05T06:10:11.123Z' },
      { stored: '2026-12-05 06:10:11.000001', iso: '2026-12-05T06:10:11.000Z' },
      { stored: '2026-12-05 06:10:11.999000', iso: '2026-12-05T06:10:11.999Z' },
      { stored: '1969-12-31 23:59:59.999500', iso: '1969-12-31T23:59:59.999Z' },
    ];
    const literal = (text: string) => (dialect === 'postgres' ? `'${text}+00'` : `'${text}'`);
    for (const [i, c] of cases.entries()) {
      await orders.place(`times-${i}`, i + 1, 1);
      // The latest row: its occurred_at set to the case's value, its created_at to the next case's.
      const next = cases[(i + 1) % cases.length].stored;
      await db.query(
        `update messaging_outbox set occurred_at = ${literal(c.stored)}, created_at = ${literal(next)}
         where id = (select id from (select max(id) as id from messaging_outbox) latest)`,
      );
    }

    const claimed = await app.get(OutboxStore).claim(100, 'times-reader', 60_000);

    expect(claimed).toHaveLength(cases.length);
    expect(claimed.map((r) => r.occurredAt.toISOString())).toEqual(cases.map((c) => c.iso));
    expect(claimed.map((r) => r.createdAt.toISOString())).toEqual(
      cases.map((_, i) => cases[(i + 1) % cases.length].iso),
    );
  });

  // An application may read timestamptz as text (to keep microseconds, or for a date library): pg's type
  // parsers are global to the process. The claim's times must not depend on them.
  postgresOnly(dialect)(
    'reads them as dates with timestamptz parsed as text by the application',
    async () => {
      const TIMESTAMPTZ = 1184;
      const parser = types.getTypeParser(TIMESTAMPTZ) as (text: string) => unknown;
      types.setTypeParser(TIMESTAMPTZ, (text: string) => text);
      try {
        await db.query('update messaging_outbox set locked_by = null, locked_until = null');
        const claimed = await app.get(OutboxStore).claim(100, 'times-reader-2', 60_000);
        expect(claimed.length).toBeGreaterThan(0);
        for (const row of claimed) {
          expect(row.occurredAt).toBeInstanceOf(Date);
          expect(row.createdAt).toBeInstanceOf(Date);
        }
        expect(claimed[0].occurredAt.toISOString()).toBe('2026-12-05T06:10:11.123Z');
        // The relay's look for held rows (here: the rows just leased for a minute).
        const freeAt = await app.get(OutboxStore).nextHeldRowFreeAt();
        expect(freeAt).toBeInstanceOf(Date);
        expect(freeAt!.getTime()).toBeGreaterThan(Date.now() + 30_000);
      } finally {
        types.setTypeParser(TIMESTAMPTZ, parser);
      }
    },
  );
});
