import { TestingModule } from '@nestjs/testing';
import {
  encodeEnvelope,
  MESSAGING_TRANSPORT,
  MessageTransport,
  OutboxRelay,
  RelayRoundResult,
} from 'nest-reliable-messaging/testing';
import { OutboxStore } from 'nest-reliable-messaging/testing';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestDatabase, EACH_DATABASE, TestDatabase } from '../../harness/test-database';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { OrdersService, ordersWriter } from '../support/orders.fixture';
import { readOutboxRows, waitUntil } from '../support/outbox-rows';
import { TopicReader } from '../support/topic-reader';

/**
 * A relay that dies between "the broker confirmed" and "mark the rows sent" leaves rows it published
 * under its lease. Another instance must leave them alone while the lease holds, then take them over and
 * publish them again: a duplicate, never a loss.
 */
describe.each(EACH_DATABASE)('Lease expiry: takeover of a crashed relay (%s + Kafka)', (_, dialect) => {
  const N = 12;
  const LEASE_MS = 5_000;
  const topic = uniqueName('orders_takeover');
  const topics = new KafkaTopics();
  let schema: TestDatabase;
  let reader: TopicReader;
  const apps: TestingModule[] = [];

  const appOptions = (relay: object) => ({
    schema,
    transport: kafkaTransport(),
    ...ordersWriter(topic),
    messaging: { relay },
  });

  beforeAll(async () => {
    schema = await createTestDatabase(dialect, 'outbox_takeover');
    await topics.create(topic);
    reader = await new TopicReader(topic).start();
  });

  afterAll(async () => {
    await reader.stop();
    for (const app of apps.splice(0)) await app.close();
    await topics.cleanup();
    await schema.drop();
  });

  it('does not touch rows under a live lease, then republishes them once it expires', async () => {
    // The "crashed" instance: no relay of its own; it claims, publishes and then never marks.
    const crashed = await createMessagingApp(appOptions({ enabled: false }));
    apps.push(crashed);
    for (let i = 0; i < N; i++) await crashed.get(OrdersService).place(`customer-${i % 3}`, i, i);
    const claimed = await crashed.get(OutboxStore).claim(100, 'crashed-instance', LEASE_MS);
    expect(claimed).toHaveLength(N);
    const outcomes = await crashed
      .get<MessageTransport>(MESSAGING_TRANSPORT)
      .publish(claimed.map((row) => encodeEnvelope(row, row.payloadJson)));
    expect(outcomes.map((o) => o.status)).toEqual(claimed.map(() => 'CONFIRMED'));
    await reader.waitFor(N);
    const leasedUntil = Math.max(...(await readOutboxRows(schema)).map((r) => r.lockedUntil!.getTime()));

    // The survivor polls often, so only the lease can keep it from taking the rows at once.
    const survivor = await createMessagingApp(appOptions({ leaseMs: 2_000, pollIntervalMs: 250 }));
    apps.push(survivor);
    const rounds: Array<RelayRoundResult & { at: number }> = [];
    survivor.get(OutboxRelay).onRound((result) => rounds.push({ ...result, at: Date.now() }));

    await waitUntil('the survivor has polled a few times under the lease', async () => rounds.length >= 3);
    const underLease = await readOutboxRows(schema);
    // A snapshot under the lease (unless this machine was too slow to get here in time: the round times
    // checked below prove it either way).
    if (Date.now() < leasedUntil - 200) {
      expect(underLease.every((r) => r.lockedBy === 'crashed-instance' && r.sentAt === null)).toBe(true);
      expect(reader.records).toHaveLength(N);
    }

    const rows = await waitUntil('every row is sent after the takeover', async () => {
      const all = await readOutboxRows(schema);
      return all.every((r) => r.sentAt !== null) && all;
    });
    const firstTakeover = rounds.find((r) => r.claimed > 0)!;
    expect(firstTakeover.at).toBeGreaterThanOrEqual(leasedUntil);
    expect(rounds.filter((r) => r.at < leasedUntil).every((r) => r.claimed === 0)).toBe(true);
    expect(rows.every((r) => r.lockedBy === null && r.attempts === 0)).toBe(true);

    await reader.waitFor(2 * N);
    const records = await reader.settle(1_000);
    expect(records).toHaveLength(2 * N);
    const copies = new Map<string, number>();
    records.forEach((r) => copies.set(r.headers['msg.id'], (copies.get(r.headers['msg.id']) ?? 0) + 1));
    expect([...copies.keys()].sort()).toEqual(rows.map((r) => r.messageId).sort());
    expect([...copies.values()].every((count) => count === 2)).toBe(true);
    // Per key, the republished copies come in order again after the first ones.
    for (const key of ['customer-0', 'customer-1', 'customer-2']) {
      const seqs = records
        .filter((r) => r.key === key)
        .map((r) => (JSON.parse(r.value) as { seq: number }).seq);
      const once = seqs.slice(0, seqs.length / 2);
      expect(once).toEqual([...once].sort((a, b) => a - b));
      expect(seqs).toEqual([...once, ...once]);
    }
    console.log(
      `[outbox-crash-takeover ${dialect}] the survivor took the rows over ${firstTakeover.at - leasedUntil} ms after ` +
        `the crashed instance's lease expired; ${records.length} records for ${N} messages`,
    );
  });
});
