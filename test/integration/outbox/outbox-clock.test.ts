import { TestingModule } from '@nestjs/testing';
import { OutboxService, TransactionHost } from 'nest-reliable-messaging';
import { FakeClock, OutboxStore } from 'nest-reliable-messaging/testing';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { orderPlaced } from '../support/orders.fixture';

/**
 * The library's time is one injected `Clock`: an application whose clock is overridden with a `FakeClock`
 * (`overrideProvider(getMessagingClockToken())`) runs its retention job when the test advances that clock,
 * not on Node's timers (before, the job used a raw `setInterval` and the advance did nothing), and dates the
 * messages it records by that clock.
 */
describe('The outbox on an injected clock', () => {
  const INTERVAL_MS = 60_000;
  const destination = uniqueName('orders_clock');
  const clock = new FakeClock();
  let schema: TestSchema;
  let app: TestingModule;

  beforeAll(async () => {
    schema = await createTestSchema('outbox_clock');
    app = await createMessagingApp({
      schema,
      transport: kafkaTransport(),
      clock,
      messaging: {
        retention: { sentRetentionMs: 60 * 60_000, batchSize: 10, intervalMs: INTERVAL_MS },
      },
    });
  });

  afterAll(async () => {
    await app?.close();
    await schema?.drop();
  });

  const sentRowsLeft = async () => {
    const [row] = await schema.query<{ count: string }>(
      'select count(*) as count from messaging_outbox where destination = $1',
      [destination],
    );
    return Number(row.count);
  };

  it('purges when the fake clock reaches the interval, and not before', async () => {
    await schema.query(
      `insert into messaging_outbox (message_id, destination, type, key, payload, occurred_at, sent_at)
       select gen_random_uuid(), $1, 'OrderPlaced', 'k', '{}'::jsonb, now(), now() - interval '2 hours'
       from generate_series(1, 3)`,
      [destination],
    );
    const purgeSent = jest.spyOn(app.get(OutboxStore), 'purgeSent');

    await clock.advance(INTERVAL_MS - 1);
    expect(purgeSent).not.toHaveBeenCalled();
    expect(await sentRowsLeft()).toBe(3);

    await clock.advance(1);
    expect(purgeSent).toHaveBeenCalledTimes(1);
    expect(await (purgeSent.mock.results[0].value as Promise<number>)).toBe(3);
    expect(await sentRowsLeft()).toBe(0);
    purgeSent.mockRestore();
  });

  it("dates a recorded message by the injected clock's time", async () => {
    const outbox = app.get(OutboxService);
    const id = await app
      .get(TransactionHost)
      .run(() => outbox.add(orderPlaced(destination), { orderId: 1, customer: 'clock', amount: 1 }));
    const [row] = await schema.query<{ occurred_at: Date }>(
      'select occurred_at from messaging_outbox where message_id = $1',
      [id],
    );
    expect(row.occurred_at.getTime()).toBe(clock.now());
  });
});
