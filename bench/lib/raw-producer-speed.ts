import { benchName } from './databases';
import { benchWireMessages, padding } from './bench-event';
import { BrokerFixtures } from './brokers';
import { TransportKind } from './plan';
import { rawPublisher } from './raw-publishers';
import { now } from './time';

/**
 * The machine's speed as the broker's raw client sees it (issue 39): `messages` bench messages published with
 * the raw client (Kafka idempotent acks=all, RabbitMQ confirmed) in awaited batches of `batchSize`, to a
 * destination of their own (nothing consumes them), in msg/s. Printed beside absolute figures, so that a
 * reader can tell a slow machine from a slow library.
 */
export async function rawProducerRate(
  brokers: BrokerFixtures,
  kind: TransportKind,
  options: { messages: number; batchSize: number; payloadBytes: number; keys: number },
): Promise<number> {
  const destination = benchName(`bench_speed_${kind}`);
  if (kind === 'kafka') await brokers.topic(destination);
  else await brokers.exchange(destination, `${destination}.sink`);
  const { messages: count, batchSize, payloadBytes, keys } = options;
  const messages = benchWireMessages('speed', destination, count, keys, padding(payloadBytes));
  const publisher = await rawPublisher(kind);
  try {
    await publisher.publish(messages.slice(0, batchSize)); // connects and learns the destination
    const started = now();
    for (let i = batchSize; i < messages.length; i += batchSize) {
      await publisher.publish(messages.slice(i, i + batchSize));
    }
    return ((messages.length - batchSize) * 1000) / (now() - started);
  } finally {
    await publisher.close();
  }
}
