import { TestingModule } from '@nestjs/testing';
import { MessagingHealthIndicator } from 'nest-reliable-messaging';
import { OutboxRelay, OutboxRetention, RelayRoundResult } from 'nest-reliable-messaging/testing';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestDatabase, EACH_DATABASE, TestDatabase } from '../../harness/test-database';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { TopicReader } from '../support/topic-reader';

/**
 * `relay.mode: 'external'` (Debezium publishes the outbox from the log, docs/guide/14-debezium.md), without
 * Debezium: `add()` writes the row marked sent, so no relay of the library ever claims it; the polling relay
 * still publishes rows a polling instance left pending (the switch from `poll`); retention deletes the rows
 * after `sentRetentionMs` from their insert; `/health` names the mode. Debezium itself: debezium-relay.test.ts.
 */
describe.each(EACH_DATABASE)('Outbox with an external relay (%s)', (_, dialect) => {
  const topics = new KafkaTopics();
  const apps: TestingModule[] = [];
  let db: TestDatabase;
  let topic: string;

  beforeAll(async () => {
    db = await createTestDatabase(dialect, 'outbox_external');
    topic = await topics.create(uniqueName('orders_external'), 1);
  });

  afterAll(async () => {
    for (const app of apps.splice(0)) await app.close();
    await topics.cleanup();
    await db.drop();
  });

  const app = async (relay: { mode?: 'external'; enabled?: boolean }): Promise<TestingModule> => {
    const started = await createMessagingApp({
      schema: db,
      transport: kafkaTransport(),
      ...ordersWriter(topic),
      messaging: { relay, retention: { sentRetentionMs: 1, intervalMs: 86_400_000 } },
    });
    apps.push(started);
    return started;
  };

  it('writes rows marked sent, which no relay claims; publishes what a polling instance left pending', async () => {
    // A polling instance (its relay off here) leaves a row pending, then the service runs in external mode.
    const polling = await app({ enabled: false });
    await polling.get(OrdersService).place('left-pending', 1, 1);
    await polling.close();
    apps.splice(apps.indexOf(polling), 1);

    const rounds: RelayRoundResult[] = [];
    const external = await app({ mode: 'external' });
    external.get(OutboxRelay).onRound((round) => rounds.push(round));
    await external.get(OrdersService).place('written-external', 1, 2);
    const rows = await readOutboxRows(db);
    const written = rows.find((r) => r.key === 'written-external');
    expect(written?.sentAt).toBeInstanceOf(Date);

    // The relay's rounds after the external write (the bootstrap one published the pending row): none
    // claims the external row; the topic holds the pending row only.
    await waitUntil('the pending row is sent', async () =>
      (await readOutboxRows(db)).every((r) => r.sentAt !== null),
    );
    const before = rounds.length;
    external.get(OutboxRelay).wake();
    await waitUntil('one more relay round', async () => rounds.length > before);
    expect(rounds.slice(before).reduce((sum, r) => sum + r.claimed, 0)).toBe(0);
    const reader = await new TopicReader(topic).start();
    try {
      const records = await reader.settle();
      expect(records.map((r) => r.key)).toEqual(['left-pending']);
    } finally {
      await reader.stop();
    }
    expect(await external.get(MessagingHealthIndicator).relay()).toEqual({
      relay: { status: 'up', mode: 'external' },
    });
  });

  it('deletes the rows retention.sentRetentionMs after their insert', async () => {
    const external = apps[apps.length - 1];
    await external.get(OrdersService).place('purged', 1, 3);
    await new Promise((resolve) => setTimeout(resolve, 5)); // past the 1 ms retention
    expect(await external.get(OutboxRetention).purge()).toBe(3);
    expect(await readOutboxRows(db)).toEqual([]);
  });
});
