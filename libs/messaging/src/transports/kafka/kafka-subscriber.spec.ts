import { Logger } from '@nestjs/common';
import { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { FakeClock } from '../../common/fake-clock';
import { MessageHeaders } from '../../envelope/message-headers';
import { OutageLog } from '../outage-log';
import { Delivery, Settlement, Subscription } from '../delivery-contract';
import { KafkaSubscriber, KafkaSubscriberHost } from './kafka-subscriber';
import { useQuietWarnings } from '../../../spec-support/quiet-warnings';

const TOPIC = 'orders';
const GROUP = 'billing';
const RETRY_TOPIC = `${TOPIC}.${GROUP}.retry.1000ms`;

/** The subscribers' time and jitter, a fresh one for each test. */
let clock: FakeClock;

type Listener = (event: { payload: { restart?: boolean; error?: Error; memberId?: string } }) => void;

/** The parts of a kafkajs consumer the subscriber uses, recording what it was asked to do. */
class FakeConsumer {
  readonly events = {
    CRASH: 'consumer.crash',
    GROUP_JOIN: 'consumer.group_join',
    HEARTBEAT: 'consumer.heartbeat',
    REBALANCING: 'consumer.rebalancing',
  };
  readonly listeners = new Map<string, Listener>();
  eachBatch?: (payload: EachBatchPayload) => Promise<void>;
  readonly connect = jest.fn(async () => undefined);
  readonly subscribe = jest.fn(async () => undefined);
  readonly disconnect = jest.fn(async () => undefined);
  readonly pause = jest.fn();
  readonly resume = jest.fn();
  readonly seek = jest.fn();
  readonly commitOffsets = jest.fn(async () => undefined);

  on(event: string, listener: Listener): void {
    this.listeners.set(event, listener);
  }

  async run(config: { eachBatch: (payload: EachBatchPayload) => Promise<void> }): Promise<void> {
    this.eachBatch = config.eachBatch;
  }

  crash(): void {
    this.listeners.get(this.events.CRASH)?.({ payload: { restart: false, error: new Error('gave up') } });
  }

  joined(memberId = 'member-1'): void {
    this.listeners.get(this.events.GROUP_JOIN)?.({ payload: { memberId } });
  }

  heartbeat(): void {
    this.listeners.get(this.events.HEARTBEAT)?.({ payload: {} });
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

function batchOf(topic: string, messages: KafkaMessage[], partition = 0) {
  const heartbeat = jest.fn(async () => undefined);
  const resolveOffset = jest.fn();
  const payload = {
    batch: { topic, partition, messages },
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
    clock,
    outage: new OutageLog(new Logger('test'), 'Kafka', clock),
  };
  const deliveries: Delivery[] = [];
  /** The offsets of each call of the pipeline (one lane's messages, together). */
  const calls: string[][] = [];
  const onDelivery = async (delivery: Delivery) => {
    deliveries.push(delivery);
    return settle(delivery);
  };
  const subscription: Subscription = {
    group: GROUP,
    destinations: [TOPIC],
    retryTiers: { [TOPIC]: [1_000] },
    concurrency: 2,
    onDeliveries: async (batch) => {
      calls.push(batch.map((d) => d.origin.offset as string));
      const settlements: Settlement[] = [];
      for (const delivery of batch) {
        const settlement = await onDelivery(delivery);
        settlements.push(settlement);
        if (settlement.kind !== 'ACK') break;
      }
      return batch.map((_, i) => settlements[i] ?? { kind: 'LEAVE' });
    },
  };
  const subscriber = new KafkaSubscriber(host, subscription);
  await subscriber.start();
  consumers[0].joined();
  return { subscriber, consumers, deliveries, calls };
}

/** Lets the handlers the subscriber scheduled run (they run beside kafkajs's fetch, after eachBatch returned). */
const settle = () => clock.advance(0);

/** Lets the handlers run and the commit timer fire (every 100 ms). */
const settleAndCommit = () => clock.advance(100);

/** A handler that waits until `release()` is called. */
function gate() {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => (release = resolve));
  return { opened, release };
}

describe(KafkaSubscriber.name, () => {
  useQuietWarnings();
  beforeEach(() => {
    clock = new FakeClock();
  });

  describe('onBatch', () => {
    it('commits the settled offsets and subscribes to the retry topics too', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      expect(consumer.subscribe).toHaveBeenCalledWith({ topics: [TOPIC, RETRY_TOPIC], fromBeginning: true });
      const { payload, resolveOffset } = batchOf(TOPIC, [record('5', 'a'), record('6', 'b')]);
      await consumer.eachBatch!(payload);
      expect(resolveOffset).toHaveBeenLastCalledWith('6');
      await settleAndCommit();
      expect(consumer.commitOffsets).toHaveBeenLastCalledWith([{ topic: TOPIC, partition: 0, offset: '7' }]);
    });

    it('returns to kafkajs before the handlers finish, so that the next fetch does not wait for them', async () => {
      const slow = gate();
      const { consumers, deliveries } = await startSubscriber(async (delivery) => {
        if (delivery.origin.offset === '5') await slow.opened;
        return { kind: 'ACK' };
      });
      const [consumer] = consumers;
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a')]).payload);
      await consumer.eachBatch!(batchOf(TOPIC, [record('0', 'b')], 1).payload);
      await settleAndCommit();
      expect(deliveries.map((d) => [d.origin.partition, d.origin.offset])).toEqual([
        [0, '5'],
        [1, '0'],
      ]);
      expect(consumer.commitOffsets).toHaveBeenCalledWith([{ topic: TOPIC, partition: 1, offset: '1' }]);
      expect(consumer.commitOffsets).not.toHaveBeenCalledWith([{ topic: TOPIC, partition: 0, offset: '6' }]);
      slow.release();
      await settleAndCommit();
      expect(consumer.commitOffsets).toHaveBeenCalledWith([{ topic: TOPIC, partition: 0, offset: '6' }]);
    });

    it("never commits past an unfinished message, while the partition's other keys finish", async () => {
      const slow = gate();
      const { consumers } = await startSubscriber(async (delivery) => {
        if (delivery.origin.offset === '5') await slow.opened;
        return { kind: 'ACK' };
      });
      const [consumer] = consumers;
      // 'a' and 'b' take different lanes of the two (laneOf): 6 and 7 finish first.
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a'), record('6', 'b')]).payload);
      await consumer.eachBatch!(batchOf(TOPIC, [record('7', 'b')]).payload);
      await settleAndCommit();
      expect(consumer.commitOffsets).not.toHaveBeenCalled();
      slow.release();
      await settleAndCommit();
      expect(consumer.commitOffsets).toHaveBeenLastCalledWith([{ topic: TOPIC, partition: 0, offset: '8' }]);
    });

    it('hands a lane everything queued in it at once, in order, once its earlier messages finished', async () => {
      const slow = gate();
      const { consumers, calls } = await startSubscriber(async (delivery) => {
        if (delivery.origin.offset === '1') await slow.opened;
        return { kind: 'ACK' };
      });
      const [consumer] = consumers;
      await consumer.eachBatch!(batchOf(TOPIC, [record('1', 'a')]).payload);
      await settleAndCommit();
      for (const offset of ['2', '3', '4'])
        await consumer.eachBatch!(batchOf(TOPIC, [record(offset, 'a')]).payload);
      slow.release();
      await settleAndCommit();
      expect(calls).toEqual([['1'], ['2', '3', '4']]);
      expect(consumer.commitOffsets).toHaveBeenLastCalledWith([{ topic: TOPIC, partition: 0, offset: '5' }]);
    });

    it('holds the next fetch back while a partition has too many unfinished messages, heartbeating', async () => {
      const slow = gate();
      const { consumers } = await startSubscriber(async () => {
        await slow.opened;
        return { kind: 'ACK' };
      });
      const [consumer] = consumers;
      const many = Array.from({ length: 1_001 }, (_, i) => record(String(i), 'a'));
      const { payload, heartbeat } = batchOf(TOPIC, many);
      let returned = false;
      const batch = consumer.eachBatch!(payload).then(() => (returned = true));
      await clock.advance(2_500);
      expect(returned).toBe(false);
      expect(heartbeat).toHaveBeenCalledTimes(2);
      slow.release();
      await clock.advance(1_000);
      await batch;
      expect(returned).toBe(true);
    });

    it('on PAUSE holds the partition for the delay, then rewinds to the message and resumes', async () => {
      const { consumers, deliveries } = await startSubscriber((delivery) =>
        delivery.origin.offset === '6' ? { kind: 'PAUSE', delayMs: 2_000 } : { kind: 'ACK' },
      );
      const [consumer] = consumers;
      await consumer.eachBatch!(
        batchOf(TOPIC, [record('5', 'a'), record('6', 'a'), record('7', 'a')]).payload,
      );
      await settle();

      expect(deliveries.map((d) => d.origin.offset)).toEqual(['5', '6']);
      expect(consumer.commitOffsets).toHaveBeenLastCalledWith([{ topic: TOPIC, partition: 0, offset: '6' }]);
      expect(consumer.pause).toHaveBeenCalledWith([{ topic: TOPIC, partitions: [0] }]);
      await clock.advance(1_999);
      expect(consumer.seek).not.toHaveBeenCalled();
      await clock.advance(1);
      expect(consumer.seek).toHaveBeenCalledWith({ topic: TOPIC, partition: 0, offset: '6' });
      expect(consumer.resume).toHaveBeenCalledWith([{ topic: TOPIC, partitions: [0] }]);
    });

    it('hands out nothing more of a held partition until the rewind, then starts afresh from it', async () => {
      const { consumers, deliveries } = await startSubscriber((delivery) =>
        delivery.origin.offset === '6' && deliveries.length < 3
          ? { kind: 'PAUSE', delayMs: 1_000 }
          : { kind: 'ACK' },
      );
      const [consumer] = consumers;
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a'), record('6', 'a')]).payload);
      await settleAndCommit();
      await consumer.eachBatch!(batchOf(TOPIC, [record('7', 'a')]).payload); // fetched before the pause
      await settleAndCommit();
      expect(deliveries.map((d) => d.origin.offset)).toEqual(['5', '6']);
      await clock.advance(1_000);
      await consumer.eachBatch!(batchOf(TOPIC, [record('6', 'a'), record('7', 'a')]).payload);
      await settleAndCommit();
      expect(deliveries.map((d) => d.origin.offset)).toEqual(['5', '6', '6', '7']);
      expect(consumer.commitOffsets).toHaveBeenLastCalledWith([{ topic: TOPIC, partition: 0, offset: '8' }]);
    });

    it('holds a retry-topic record until its due time without handing it out', async () => {
      const { consumers, deliveries } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      const due = { [MessageHeaders.RETRY_DUE_AT]: '2026-12-01T00:00:00.800Z' };
      await consumer.eachBatch!(batchOf(RETRY_TOPIC, [record('0', 'a', due)]).payload);

      expect(deliveries).toEqual([]);
      expect(consumer.pause).toHaveBeenCalledWith([{ topic: RETRY_TOPIC, partitions: [0] }]);
      await clock.advance(799);
      expect(consumer.seek).not.toHaveBeenCalled();
      await clock.advance(1);
      expect(consumer.seek).toHaveBeenCalledWith({ topic: RETRY_TOPIC, partition: 0, offset: '0' });
    });

    it('holds a retry-topic record at most its tier, whatever due time it carries', async () => {
      const { consumers, deliveries } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      const farFuture = { [MessageHeaders.RETRY_DUE_AT]: '2100-01-01T00:00:00.000Z' };
      await consumer.eachBatch!(batchOf(RETRY_TOPIC, [record('0', 'a', farFuture)]).payload);

      await clock.advance(1_000); // the topic's tier
      expect(consumer.seek).toHaveBeenCalledWith({ topic: RETRY_TOPIC, partition: 0, offset: '0' });
      await consumer.eachBatch!(batchOf(RETRY_TOPIC, [record('0', 'a', farFuture)]).payload);
      await settle();
      expect(deliveries.map((d) => d.origin.offset)).toEqual(['0']);
    });

    it('marks a delivery from a retry topic with its tier, and one from the destination with none', async () => {
      const { consumers, deliveries } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      await consumer.eachBatch!(batchOf(TOPIC, [record('0', 'a')]).payload);
      await consumer.eachBatch!(batchOf(RETRY_TOPIC, [record('0', 'a')]).payload);
      await settle();
      expect(deliveries.map((d) => [d.wire.destination, d.origin.retryTierMs])).toEqual([
        [TOPIC, undefined],
        [TOPIC, 1_000],
      ]);
    });
  });

  describe('tenants', () => {
    it("handles a tenant's records while another tenant's wait for their database, on keys that hash alike", async () => {
      const down = gate();
      const { consumers, deliveries } = await startSubscriber(async (delivery) => {
        if (delivery.wire.headers[MessageHeaders.TENANT] === 'down') await down.opened;
        return { kind: 'ACK' };
      });
      const [consumer] = consumers;
      const of = (tenant: string) => ({ [MessageHeaders.TENANT]: tenant });
      // The tenant that is down takes both of its slots (concurrency 2) on keys a and b, in partition 0.
      await consumer.eachBatch!(
        batchOf(TOPIC, [
          record('1', 'a', of('down')),
          record('2', 'b', of('down')),
          record('3', 'c', of('down')),
        ]).payload,
      );
      // Another tenant's records of the same keys, in partition 1, go on meanwhile and are committed.
      await consumer.eachBatch!(
        batchOf(
          TOPIC,
          [record('1', 'a', of('up')), record('2', 'b', of('up')), record('3', 'c', of('up'))],
          1,
        ).payload,
      );
      await settleAndCommit();
      expect(consumer.commitOffsets).toHaveBeenCalledWith([{ topic: TOPIC, partition: 1, offset: '4' }]);
      down.release();
      await settleAndCommit();
      expect(consumer.commitOffsets).toHaveBeenCalledWith([{ topic: TOPIC, partition: 0, offset: '4' }]);
      expect(deliveries).toHaveLength(6);
    });
  });

  describe('rejoin', () => {
    it('drops what the old assignment queued and commits nothing for it', async () => {
      const slow = gate();
      const { consumers, deliveries } = await startSubscriber(async (delivery) => {
        if (delivery.origin.offset === '5') await slow.opened;
        return { kind: 'ACK' };
      });
      const [consumer] = consumers;
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a')]).payload);
      await settle();
      await consumer.eachBatch!(batchOf(TOPIC, [record('6', 'a')]).payload); // queued behind 5
      consumer.joined(); // kafkajs fetches again from the committed offset
      slow.release();
      await settle();
      expect(deliveries.map((d) => d.origin.offset)).toEqual(['5']);
      expect(consumer.commitOffsets).not.toHaveBeenCalled();
    });
  });

  describe('group coordinator', () => {
    it('replaces the consumer when the coordinator stops answering heartbeats and commits, and rejoins', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      await clock.advance(2_000);
      consumer.heartbeat();
      consumer.commitOffsets.mockRejectedValue(new Error('Connection error: connect ECONNREFUSED'));
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a')]).payload);
      await clock.advance(2_000);
      expect(consumers).toHaveLength(1); // answered 2 s ago
      await clock.advance(1_000);
      expect(consumer.disconnect).toHaveBeenCalled();
      await clock.advance(10);
      expect(consumers).toHaveLength(2);
      expect(consumers[1].subscribe).toHaveBeenCalled();
    });

    it('replaces it as well when a commit has waited that long for an answer (kafkajs retries it for 30 s)', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      consumer.commitOffsets.mockImplementation(() => new Promise(() => undefined));
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a')]).payload);
      await clock.advance(4_000); // the commit starts at 100 ms, checks run every second
      expect(consumer.disconnect).toHaveBeenCalled();
    });

    it('leaves a consumer alone whose heartbeats pause while its commits go through (kafkajs retrying a fetch)', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      await consumers[0].eachBatch!(batchOf(TOPIC, [record('5', 'a')]).payload);
      await clock.advance(2_500);
      await consumers[0].eachBatch!(batchOf(TOPIC, [record('6', 'a')]).payload);
      await clock.advance(2_500);
      expect(consumers).toHaveLength(1);
    });

    it('leaves a consumer alone whose heartbeats pause with no commit failing', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      await clock.advance(10_000);
      expect(consumers).toHaveLength(1);
    });

    it('replaces a consumer kafkajs fetches on after a rejoin that did not complete, once its commits fail', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      // The rejoin fails (the new coordinator loading): no GROUP_JOIN; heartbeats go to the new coordinator
      // and are answered, commits to the old one are retried by kafkajs and never succeed.
      consumer.listeners.get(consumer.events.REBALANCING)?.({ payload: {} });
      consumer.commitOffsets.mockImplementation(() => new Promise(() => undefined));
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a')]).payload);
      for (let i = 0; i < 5; i++) {
        consumer.heartbeat();
        await clock.advance(1_000);
      }
      expect(consumer.disconnect).toHaveBeenCalled();
      await clock.advance(10);
      expect(consumers).toHaveLength(2);
    });

    it('leaves a consumer alone whose rejoin did not complete while its commits go through', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      consumer.listeners.get(consumer.events.REBALANCING)?.({ payload: {} });
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a')]).payload);
      await clock.advance(10_000);
      expect(consumers).toHaveLength(1);
    });

    it('leaves a consumer alone while it joins (no answer expected)', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      consumers[0].listeners.get(consumers[0].events.REBALANCING)?.({ payload: {} });
      await clock.advance(10_000);
      expect(consumers).toHaveLength(1);
    });

    it('replaces a consumer whose rejoin neither completes nor fails within the rebalance timeout', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      // The coordinator's broker was killed: kafkajs rejoins, and its join is never answered.
      consumer.listeners.get(consumer.events.REBALANCING)?.({ payload: {} });
      await clock.advance(60_000);
      expect(consumers).toHaveLength(1); // the broker may take the whole rebalance timeout
      await clock.advance(6_000);
      expect(consumer.disconnect).toHaveBeenCalled();
      await clock.advance(10);
      expect(consumers).toHaveLength(2);
      expect(consumers[1].subscribe).toHaveBeenCalled();
    });

    it('replaces one kafkajs restarted after a crash whose join never completes', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      consumer.listeners.get(consumer.events.CRASH)?.({ payload: { restart: true, error: new Error('x') } });
      await clock.advance(66_000);
      expect(consumer.disconnect).toHaveBeenCalled();
    });

    it('leaves a consumer alone whose rejoin completed, however long it took', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      const [consumer] = consumers;
      consumer.listeners.get(consumer.events.REBALANCING)?.({ payload: {} });
      await clock.advance(50_000);
      consumer.joined();
      await clock.advance(60_000);
      expect(consumers).toHaveLength(1);
      expect(consumer.disconnect).not.toHaveBeenCalled();
    });
  });

  describe('restart', () => {
    it('starts a fresh consumer after a crash, once the reconnect backoff has passed', async () => {
      const { consumers } = await startSubscriber(() => ({ kind: 'ACK' }));
      consumers[0].crash();
      expect(consumers[0].disconnect).toHaveBeenCalled();
      await clock.advance(499); // 1000 ms × 0.5
      expect(consumers).toHaveLength(1);
      await clock.advance(1);
      expect(consumers).toHaveLength(2);
      expect(consumers[1].run).toBeDefined();
    });
  });

  describe('stop', () => {
    it('cancels a pending rewind', async () => {
      const { subscriber, consumers } = await startSubscriber(() => ({ kind: 'PAUSE', delayMs: 1_000 }));
      const [consumer] = consumers;
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a')]).payload);
      await settle();
      await subscriber.stop();
      await clock.advance(5_000);
      expect(consumer.seek).not.toHaveBeenCalled();
      expect(consumer.disconnect).toHaveBeenCalled();
    });

    it('lets running handlers finish and commits what they settled before it disconnects', async () => {
      const slow = gate();
      const { subscriber, consumers, deliveries } = await startSubscriber(async () => {
        await slow.opened;
        return { kind: 'ACK' };
      });
      const [consumer] = consumers;
      await consumer.eachBatch!(batchOf(TOPIC, [record('5', 'a')]).payload);
      await settle();
      const stopped = subscriber.stop();
      await consumer.eachBatch!(batchOf(TOPIC, [record('6', 'a')]).payload); // fetched meanwhile
      slow.release();
      await stopped;
      expect(deliveries.map((d) => d.origin.offset)).toEqual(['5']);
      expect(consumer.commitOffsets).toHaveBeenCalledWith([{ topic: TOPIC, partition: 0, offset: '6' }]);
      expect(consumer.commitOffsets.mock.invocationCallOrder[0]).toBeLessThan(
        consumer.disconnect.mock.invocationCallOrder[0],
      );
    });
  });
});
