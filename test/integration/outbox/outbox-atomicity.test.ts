import { TestingModule } from '@nestjs/testing';
import { getRepositoryToken } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { NoActiveTransactionError, OutboxPayloadInvalidError } from 'nest-reliable-messaging';
import { KafkaTopics } from '../../harness/kafka';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { createTestDatabase, EACH_DATABASE, TestDatabase } from '../../harness/test-database';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { Order, OrdersService, ordersWriter } from '../support/orders.fixture';
import { TopicReader } from '../support/topic-reader';

describe.each(EACH_DATABASE)('Outbox atomicity (%s + Kafka)', (_, dialect) => {
  let schema: TestDatabase;
  let app: TestingModule;
  let reader: TopicReader;
  const topics = new KafkaTopics();
  const topic = uniqueName('orders');

  beforeAll(async () => {
    schema = await createTestDatabase(dialect, 'outbox_atomic');
    await topics.create(topic);
    app = await createMessagingApp({
      schema,
      transport: kafkaTransport(),
      ...ordersWriter(topic),
    });
    reader = await new TopicReader(topic).start();
  });

  afterAll(async () => {
    await reader.stop();
    await app.close();
    await topics.cleanup();
    await schema.drop();
  });

  const outboxRows = async () => {
    return schema.query<{ message_id: string; sent_at: Date | null; key: string }>(
      `select message_id, sent_at, ${schema.quote('key')} from messaging_outbox order by id`,
    );
  };

  it('publishes a committed message once, with its envelope', async () => {
    const order = await app.get(OrdersService).place('alice', 42);
    const [record] = await reader.waitFor(1);
    // Once the row is marked sent, every copy the relay published is in the log.
    await eventually(async () => expect((await outboxRows())[0]?.sent_at).not.toBeNull());
    await reader.settle();
    expect(reader.records).toHaveLength(1);
    expect(JSON.parse(record.value)).toEqual({ orderId: order.id, customer: 'alice', amount: 42 });
    expect(record.key).toBe('alice');
    expect(record.headers['msg.type']).toBe('OrderPlaced');
    expect(record.headers['msg.envelope-version']).toBe('1');
    expect(record.headers['content-type']).toBe('application/json');
    expect(record.headers['msg.id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    const rows = await outboxRows();
    expect(rows).toHaveLength(1);
    expect(rows[0].message_id).toBe(record.headers['msg.id']);
    expect(rows[0].sent_at).not.toBeNull();
  });

  it('leaves neither the business row nor a message when the transaction rolls back', async () => {
    const before = reader.records.length;
    await expect(app.get(OrdersService).placeThenFail('bob')).rejects.toThrow('business rule broken');
    const orders = await app.get<Repository<Order>>(getRepositoryToken(Order)).findBy({ customer: 'bob' });
    expect(orders).toEqual([]);
    expect((await outboxRows()).filter((r) => r.key === 'bob')).toEqual([]);
    // A committed order as a fence: once its record is in, the relay has been through the table.
    await app.get(OrdersService).place('bob-fence', 1);
    await reader.waitFor(before + 1);
    await reader.settle();
    expect(reader.records.slice(before).map((r) => r.key)).toEqual(['bob-fence']);
  });

  it('joins nested @Outbox calls into the outer transaction', async () => {
    const before = reader.records.length;
    await app.get(OrdersService).placeTwo('carol');
    await reader.waitFor(before + 2);
    const carol = reader.records
      .filter((r) => r.key === 'carol')
      .map((r) => JSON.parse(r.value) as { seq: number });
    expect(carol.map((e) => e.seq)).toEqual([1, 2]);
  });

  // claim: C-21
  it('refuses to record a message outside a transaction', async () => {
    await expect(app.get(OrdersService).placeWithoutTransaction('dave')).rejects.toBeInstanceOf(
      NoActiveTransactionError,
    );
  });

  // claim: C-21
  it('rolls back when a payload breaks the event schema, naming the field', async () => {
    const error = await app
      .get(OrdersService)
      .placeInvalid('erin')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxPayloadInvalidError);
    expect((error as Error).message).toContain('amount');
    expect(await app.get<Repository<Order>>(getRepositoryToken(Order)).findBy({ customer: 'erin' })).toEqual(
      [],
    );
  });

  it('keeps using injected repositories normally outside a transaction', async () => {
    const repo = app.get<Repository<Order>>(getRepositoryToken(Order));
    const saved = await repo.save(repo.create({ customer: 'frank', amount: 1 }));
    expect(await repo.findOneBy({ id: saved.id })).toMatchObject({ customer: 'frank' });
  });
});
