import { ConsumeMessage } from 'amqplib';
import { uniqueName } from '../../harness/names';
import { RabbitFixture } from '../../harness/rabbitmq';

describe('RabbitMQ (smoke)', () => {
  const rabbit = new RabbitFixture();

  afterAll(async () => {
    await rabbit.cleanup();
  });

  it('publishes with publisher confirms and consumes with a manual ack', async () => {
    const exchange = uniqueName('smoke_x');
    const queue = uniqueName('smoke_q');
    rabbit.track({ exchanges: [exchange], queues: [queue] });
    const connection = await rabbit.connect();

    const publisher = await connection.createConfirmChannel();
    await publisher.assertExchange(exchange, 'topic', { durable: false, autoDelete: false });
    await publisher.assertQueue(queue, { durable: false });
    await publisher.bindQueue(queue, exchange, '#');
    publisher.publish(exchange, 'k', Buffer.from('hello'), { mandatory: true, messageId: 'm-1' });
    await publisher.waitForConfirms();

    const consumer = await connection.createChannel();
    await consumer.prefetch(1);
    const received = await new Promise<ConsumeMessage>((resolve) => {
      void consumer.consume(queue, (message) => message && resolve(message), { noAck: false });
    });
    expect(received.content.toString()).toBe('hello');
    expect(received.properties.messageId).toBe('m-1');
    consumer.ack(received);
    await consumer.close();

    const check = await connection.createChannel();
    const state = await check.checkQueue(queue);
    expect(state.messageCount).toBe(0);
    await check.close();
    await publisher.close();
  });
});
