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

  // claim: C-27
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

    // A round is reported once its rows are marked: wait for the report too, not only for the rows.
    const rows = await waitUntil('every row is sent after the takeover, and its round reported', async () => {
      const all = await readOutboxRows(schema);
      return all.every((r) => r.sentAt !== null) && rounds.some((r) => r.claimed > 0) && all;
    });
    const firstTakeover = rounds.find((r) => r.claimed > 0)!;
    expect(firstTakeover.at).toBeGreaterThanOrEqual(leasedUntil);
    expect(rounds.filter((r) => r.at < leasedUntil).every((r) => r.claimed === 0)).toBe(true);
    expect(rows.every((r) => r.lockedBy === null && r.attempts === 0)).toBe(true);

    await reader.waitFor(2 * N);
    const records = await reader.settle();
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

  // claim: C-28
  it('lets only the instance that holds a row mark it: a relay whose lease ran out touches nothing', async () => {
    // The survivor of the test before must not claim these rows first.
    for (const earlier of apps.splice(0)) await earlier.close();
    const app = await createMessagingApp(appOptions({ enabled: false }));
    apps.push(app);
    const store = app.get(OutboxStore);
    await app.get(OrdersService).place('late', 1, 1);
    await app.get(OrdersService).place('late', 2, 2);
    const late = await store.claim(100, 'late-instance', 60_000);
    expect(late.map((r) => r.key)).toEqual(['late', 'late']);
    // The late instance stalls past its lease; another instance takes the rows over.
    const past =
      dialect === 'postgres' ? "now() - interval '1 second'" : 'utc_timestamp(6) - interval 1 second';
    await schema.query(
      `update messaging_outbox set locked_until = ${past} where locked_by = 'late-instance'`,
    );
    const taken = await store.claim(100, 'new-holder', 60_000);
    expect(taken.map((r) => r.id)).toEqual(late.map((r) => r.id));

    // The late instance's answers come in now: neither may change what the new holder has in flight.
    await store.markSent([late[0].id], 'late-instance');
    await store.markFailed(
      [{ id: late[1].id, error: 'AMBIGUOUS: late', retryInMs: 60_000 }],
      'late-instance',
    );
    const ids = late.map((r) => r.id);
    const rowsOf = async () => (await readOutboxRows(schema)).filter((r) => ids.includes(r.id));
    expect((await rowsOf()).map((r) => [r.lockedBy, r.sentAt, r.attempts, r.lastError])).toEqual([
      ['new-holder', null, 0, null],
      ['new-holder', null, 0, null],
    ]);

    await store.markSent(ids, 'new-holder');
    expect((await rowsOf()).map((r) => [r.lockedBy, r.sentAt !== null])).toEqual([
      [null, true],
      [null, true],
    ]);
  });

  it('marks the batch before sent with the next claim: only rows it still holds, never claiming them again', async () => {
    // No relay of the tests before may claim these rows, and their rows are out of the way.
    for (const earlier of apps.splice(0)) await earlier.close();
    const now = dialect === 'postgres' ? 'now()' : 'utc_timestamp(6)';
    await schema.query(
      `update messaging_outbox set sent_at = ${now}, locked_by = null where sent_at is null`,
    );
    const app = await createMessagingApp(appOptions({ enabled: false }));
    apps.push(app);
    const store = app.get(OutboxStore);
    const orders = app.get(OrdersService);
    for (const [customer, seq] of [
      ['m-a', 1],
      ['m-a', 2],
      ['m-b', 3],
      ['m-a', 4],
    ] as const)
      await orders.place(customer, seq, seq);
    const first = await store.claim(2, 'relay', 60_000);
    expect(first.map((r) => r.key)).toEqual(['m-a', 'm-a']);
    const [a1, a2] = first.map((r) => r.id);
    const past =
      dialect === 'postgres' ? "now() - interval '1 second'" : 'utc_timestamp(6) - interval 1 second';
    // While the batch was on the wire: a1's lease ran out (nobody took it: still this relay's row, and
    // claimable by the columns), a2's ran out and another instance took it over.
    await schema.query(`update messaging_outbox set locked_until = ${past} where id = ${a1}`);
    await schema.query(`update messaging_outbox set locked_by = 'other' where id = ${a2}`);

    const second = await store.claim(10, 'relay', 60_000, [a1, a2], [a1, a2]);
    // Not a1 again; the key's later row goes on behind the batch (a1 and a2 count as in flight).
    expect(second.map((r) => r.key)).toEqual(['m-b', 'm-a']);
    const rows = (await readOutboxRows(schema)).filter(
      (r) => r.destination === topic && r.key.startsWith('m-'),
    );
    expect(rows.map((r) => [r.key, r.lockedBy, r.sentAt !== null])).toEqual([
      ['m-a', null, true],
      ['m-a', 'other', false],
      ['m-b', 'relay', false],
      ['m-a', 'relay', false],
    ]);
  });
});
