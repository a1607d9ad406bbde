import { TestingModule } from '@nestjs/testing';
import * as amqp from 'amqplib';
import { OutboxService, TransactionHost } from 'nest-reliable-messaging';
import { OutboxRelay, RelayRoundResult } from 'nest-reliable-messaging/testing';
import { uniqueName } from '../../harness/names';
import { RabbitFixture } from '../../harness/rabbitmq';
import { createTestDatabase, EACH_DATABASE, TestDatabase } from '../../harness/test-database';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { orderPlaced } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { bindQueue, QueueReader } from '../support/queue-reader';

/**
 * Issue 26, defect 3: a claim takes its rows in id order and then keeps each key's order, so a key whose
 * first row cannot go (backing off after a refusal, or in flight elsewhere) used to fill the claim with
 * rows it then had to drop: 400 rows of one such key (two batches of 200) starved every other key and
 * destination. The claim now looks past a key whose first row is not claimable.
 */
describe.each(EACH_DATABASE)('A key whose first row cannot go (%s + RabbitMQ)', (_, dialect) => {
  const rabbit = new RabbitFixture();
  const bound = uniqueName('orders_bound');
  const unbound = uniqueName('orders_unbound'); // an exchange no queue is bound to: every publish comes back
  let db: TestDatabase;
  let connection: amqp.ChannelModel;
  let reader: QueueReader;
  let app: TestingModule;

  beforeAll(async () => {
    db = await createTestDatabase(dialect, 'outbox_blocked_key');
    connection = await rabbit.connect();
    const queue = uniqueName('orders_bound_q');
    rabbit.track({ exchanges: [bound, unbound], queues: [queue] });
    await bindQueue(connection, bound, queue);
    reader = await new QueueReader(connection, queue).start();
    app = await createMessagingApp({
      schema: db,
      transport: rabbitTransport(),
      // Batches of 200, so a claim takes 400 rows; a safety poll of an hour: rounds come from wake-ups only.
      messaging: { relay: { batchSize: 200, pollIntervalMs: 3_600_000 } },
    });
  });

  afterAll(async () => {
    await reader?.stop();
    await app?.close();
    await rabbit.cleanup();
    await db?.drop();
  });

  const add = (work: (outbox: OutboxService) => Promise<unknown>) =>
    app.get(TransactionHost).run(() => work(app.get(OutboxService)));

  // claim: C-24
  it('publishes the other destinations within two relay rounds behind 400 rows of a key whose first row was refused', async () => {
    const relay = app.get(OutboxRelay);
    await add((outbox) => outbox.add(orderPlaced(unbound), { orderId: 0, customer: 'stuck', amount: 0 }));
    const [head] = await waitUntil('the unroutable row was refused and released', async () => {
      const rows = await readOutboxRows(db);
      return rows[0]?.attempts >= 1 && rows[0].lockedBy === null && rows;
    });
    expect(head.lastError).toContain('UnroutableMessageError');
    // Its backoff, lengthened to an hour: the relay's own is short and jittered, and the test must not race
    // it. Only while the row is free: a retry in flight would overwrite it when it fails again.
    const now = dialect === 'postgres' ? 'now()' : 'utc_timestamp(6)';
    await waitUntil('the refused row is parked for an hour', async () => {
      await db.query(
        `update messaging_outbox set available_at = ${now} + interval '1' hour
         where id = $1 and locked_by is null`,
        [head.id],
      );
      const [row] = await db.query<{ parked: boolean | number }>(
        `select available_at > ${now} + interval '30' minute and locked_by is null as parked
         from messaging_outbox where id = $1`,
        [head.id],
      );
      return Boolean(row.parked);
    });

    // One transaction: 400 more rows of the refused key, then 10 to the bound destination. Its commit wakes
    // the relay.
    await add(async (outbox) => {
      for (let i = 1; i <= 400; i++) {
        await outbox.add(orderPlaced(unbound), { orderId: i, customer: 'stuck', amount: i });
      }
      for (let i = 0; i < 10; i++) {
        await outbox.add(orderPlaced(bound), { orderId: 1000 + i, customer: `other-${i}`, amount: i });
      }
    });
    // Rounds counted from the commit on: the refused row's own timers (its first, short backoff) may run
    // empty rounds while the 410 rows are written (a CI run counted two such and read the rows before the
    // commit's round). Every round reported from here claimed after the commit, or is followed by the one
    // the commit asked for; two more wake-ups, two rounds. Before the fix, every claim took the 400 rows of
    // the refused key and kept none: no round ever published the other destination.
    const rounds: RelayRoundResult[] = [];
    relay.onRound((round) => rounds.push(round));
    relay.wake();
    await waitUntil('a relay round after the commit', async () => rounds.length >= 1);
    relay.wake();
    await waitUntil('a second relay round', async () => rounds.length >= 2);

    const rows = await readOutboxRows(db);
    const others = rows.filter((r) => r.destination === bound);
    expect(others.filter((r) => r.sentAt !== null)).toHaveLength(10);
    expect(await reader.settle()).toHaveLength(10);
    // The stuck key's rows wait behind its first, untried.
    const stuck = rows.filter((r) => r.destination === unbound);
    expect(stuck).toHaveLength(401);
    expect(stuck.every((r) => r.sentAt === null)).toBe(true);
    expect(stuck.slice(1).every((r) => r.attempts === 0)).toBe(true);
  });
});
