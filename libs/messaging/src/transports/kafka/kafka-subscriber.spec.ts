import { Logger } from '@nestjs/common';
import { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { systemClock } from '../../common/clock';
import { MessageHeaders } from '../../envelope/message-headers';
import { OutageLog } from '../outage-log';
import { Delivery, Settlement, Subscription } from '../subscription.interface';
import { KafkaSubscriber, KafkaSubscriberHost } from './kafka-subscriber';
import { useFakeTime } from '../../../spec-support/fake-time';

const TOPIC = 'orders';
const GROUP = 'billing';
const RETRY_TOPIC = `${TOPIC}.${GROUP}.retry.1000ms`;

/** The parts of a kafkajs consumer the subscriber uses, recording what it was asked to do. */
class FakeConsumer {
  readonly events = { CRASH: 'consumer.crash' };
  readonly listeners = new Map<string, (event: { payload: { restart: boolean; error: Error } }) => void>();
  eachBatch?: (payload: EachBatchPayload) => Promise<void>;
  readonly connect = jest.fn(async () => undefined);
  readonly subscribe = jest.fn(async () => undefined);
  readonly disconnect = jest.fn(async () => undefined);
  readonly pause = jest.fn();
  readonly resume = jest.fn();
  readonly seek = jest.fn();
  readonly commitOffsets = jest.fn(async () => undefined);

  on(event: string, listener: (event: { payload: { restart: boolean; error: Error } }) => void): void {
    this.listeners.set(event, listener);
  }

  async run(config: { eachBatch: (payload: EachBatchPayload) => Promise<void> }): Promise<void> {
    this.eachBatch = config.eachBatch;
  }

  crash(): void {
    this.listeners.get(this.events.CRASH)?.({ payload: { restart: false, error: new Error('gave up') } });
  }
}

function record(offset: string, key: string, headers: Record<string, string> = {}): KafkaMessage {
  return {
    offset,
    key: Buffer.from(key),
    value: Buffer.from('{}'),
    headers: { [MessageHeaders.ID]: `id-${offset}`, ...headers },
    timestamp: '0',
    attributes: 0,
  };
}

function batchOf(topic: string, messages: KafkaMessage[]) {
  const heartbeat = jest.fn(async () => undefined);
  const resolveOffset = jest.fn();
  const payload = {
    batch: { topic, partition: 0, messages },
    heartbeat,
    resolveOffset,
    isRunning: () => true,
    isStale: () => false,
  } as unknown as EachBatchPayload;
  return { payload, heartbeat, resolveOffset };
}

/** A subscriber over fake consumers; `settle` decides what the pipeline answers for each delivery. */
async function startSubscriber(settle: (delivery: Delivery) => Promise<Settlement> | Settlement) {
  const consumers: FakeConsumer[] = [];
  const host: KafkaSubscriberHost = {
    kafka: {
      consumer: () => {
        consumers.push(new FakeConsumer());
        return consumers[consumers.length - 1];
      },
    } as unknown as Kafka,
    sessionTimeoutMs: 30_000,
    log: new Logger('test'),
    clock: systemClock,
    outage: new OutageLog(new Logger('test'), 'Kafka', systemClock),
  };
  const deliveries: Delivery[] = [];
  const subscription: Subscription = {
    group: GROUP,
    destinations: [TOPIC],
    retryTiers: { [TOPIC]: [1_000] },
    concurrency: 2,
    onDelivery: async (delivery) => {
      deliveries.push(delivery);
      return settle(delivery);
    },
  };
  const subscriber = new KafkaSubscriber(host, subscription);
  await subscriber.start();
  return { subscriber, consumers, deliveries };
}

describe(KafkaSubscriber.name, () => {
  useFakeTime();

  describe('onBatch', () => {
    it('commits the settled offsets and subscribes to the retry topics too', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      expect(consumer.subscribe).toHaveBeenCalledWith({ topics: [TOPIC, RETRY_TOPIC], fromBeginning: true });
      const { payload } = batchOf(TOPIC, [record('5', 'a'), record('6', 'b')]);
      await consumer.eachBatch!(payload);
      expect(consumer.commitOffsets).toHaveBeenLastCalledWith([{ topic: TOPIC, partition: 0, offset: '7' }]);
    });

    it('on PAUSE holds the partition for the delay, then rewinds to the message and resumes', async () => {
      const { consumers, deliveries } = await startSubscriber((delivery) =>
        delivery.origin.offset === '6' ? { kind: 'PAUSE', delayMs: 2_000 } : { kind: 'ACK' },
      );
      const [consumer] = consumers;
      await consumer.eachBatch!(
        batchOf(TOPIC, [record('5', 'a'), record('6', 'a'), record('7', 'a')]).payload,
      );

      expect(deliveries.map((d) => d.origin.offset)).toEqual(['5', '6']);
      expect(consumer.commitOffsets).toHaveBeenLastCalledWith([{ topic: TOPIC, partition: 0, offset: '6' }]);
      expect(consumer.pause).toHaveBeenCalledWith([{ topic: TOPIC, partitions: [0] }]);
      await jest.advanceTimersByTimeAsync(1_999);
      expect(consumer.seek).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      expect(consumer.seek).toHaveBeenCalledWith({ topic: TOPIC, partition: 0, offset: '6' });
      expect(consumer.resume).toHaveBeenCalledWith([{ topic: TOPIC, partitions: [0] }]);
    });

    it('holds a retry-topic record until its due time without handing it out', async () => {
      const { consumers, deliveries } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      const due = { [MessageHeaders.RETRY_DUE_AT]: '2026-12-01T00:00:00.800Z' };
      await consumer.eachBatch!(batchOf(RETRY_TOPIC, [record('0', 'a', due)]).payload);

      expect(deliveries).toEqual([]);
      expect(consumer.pause).toHaveBeenCalledWith([{ topic: RETRY_TOPIC, partitions: [0] }]);
      await jest.advanceTimersByTimeAsync(799);
      expect(consumer.seek).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      expect(consumer.seek).toHaveBeenCalledWith({ topic: RETRY_TOPIC, partition: 0, offset: '0' });
    });

    it('holds a retry-topic record at most its tier, whatever due time it carries', async () => {
      const { consumers, deliveries } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      const farFuture = { [MessageHeaders.RETRY_DUE_AT]: '2100-01-01T00:00:00.000Z' };
      await consumer.eachBatch!(batchOf(RETRY_TOPIC, [record('0', 'a', farFuture)]).payload);

      await jest.advanceTimersByTimeAsync(1_000); // the topic's tier
      expect(consumer.seek).toHaveBeenCalledWith({ topic: RETRY_TOPIC, partition: 0, offset: '0' });
      await consumer.eachBatch!(batchOf(RETRY_TOPIC, [record('0', 'a', farFuture)]).payload);
      expect(deliveries.map((d) => d.origin.offset)).toEqual(['0']);
    });

    it('marks a delivery from a retry topic with its tier, and one from the destination with none', async () => {
      const { consumers, deliveries } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      await consumer.eachBatch!(batchOf(TOPIC, [record('0', 'a')]).payload);
      await consumer.eachBatch!(batchOf(RETRY_TOPIC, [record('0', 'a')]).payload);
      expect(deliveries.map((d) => [d.wire.destination, d.origin.retryTierMs])).toEqual([
        [TOPIC, undefined],
        [TOPIC, 1_000],
      ]);
    });

    it('heartbeats once a second while a handler runs long', async () => {
      let finish!: () => void;
      const running = new Promise<void>((resolve) => (finish = resolve));
      const { consumers } = await startSubscriber(async () => {
        await running;
        return { kind: 'ACK' };
      });
      const { payload, heartbeat } = batchOf(TOPIC, [record('5', 'a')]);
      const batch = consumers[0].eachBatch!(payload);
      await jest.advanceTimersByTimeAsync(3_500);
      expect(heartbeat).toHaveBeenCalledTimes(3);
      finish();
      await jest.advanceTimersByTimeAsync(1_000);
      await batch;
    });
  });

  describe('restart', () => {
    it('starts a fresh consumer after a crash, once the reconnect backoff has passed', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      consumers[0].crash();
      expect(consumers[0].disconnect).toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(499); // 1000 ms × 0.5
      expect(consumers).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(consumers).toHaveLength(2);
      expect(consumers[1].run).toBeDefined();
    });
  });

  describe('stop', () => {
    it('cancels a pending rewind', async () => {
      const { subscriber, consumers } = await startSubscriber(() => ({ kind: 'PAUSE', delayMs: 1_000 }));
      const [consumer] = consumers;
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a')]).payload);
      await subscriber.stop();
      await jest.advanceTimersByTimeAsync(5_000);
      expect(consumer.seek).not.toHaveBeenCalled();
      expect(consumer.disconnect).toHaveBeenCalled();
    });
  });
});
