import { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import * as amqp from 'amqplib';
import { FakeClock } from '../../common/fake-clock';
import { MessageHeaders } from '../../envelope/message-headers';
import { Delivery, Settlement, Subscription } from '../delivery-contract';
import { RabbitConnection } from './rabbit-connection';
import { RabbitSubscriber } from './rabbit-subscriber';
import { useQuietWarnings } from '../../../spec-support/quiet-warnings';
import { oneByOne } from '../../../spec-support/one-by-one';

const DESTINATION = 'orders';
const GROUP = 'billing';
const WORK_QUEUE = `${DESTINATION}.${GROUP}`;

/** The subscribers' time and jitter, a fresh one for each test. */
let clock: FakeClock;

/** The parts of an amqplib channel the subscriber uses, recording what it was asked to do. */
class FakeChannel extends EventEmitter {
  readonly queues = new Map<string, amqp.Options.AssertQueue | undefined>();
  readonly acked: number[] = [];
  readonly nacked: Array<[number, boolean]> = [];
  onMessage?: (message: amqp.ConsumeMessage | null) => void;

  prefetch = jest.fn(async () => undefined);
  assertExchange = jest.fn(async () => undefined);
  bindQueue = jest.fn(async () => undefined);
  cancel = jest.fn(async () => undefined);
  close = jest.fn(async () => undefined);

  async assertQueue(name: string, options?: amqp.Options.AssertQueue): Promise<void> {
    this.queues.set(name, options);
  }

  async consume(_queue: string, onMessage: (message: amqp.ConsumeMessage | null) => void) {
    this.onMessage = onMessage;
    return { consumerTag: 'tag' };
  }

  ack(message: amqp.Message): void {
    this.acked.push(message.fields.deliveryTag);
  }

  nack(message: amqp.Message, _allUpTo: boolean, requeue: boolean): void {
    this.nacked.push([message.fields.deliveryTag, requeue]);
  }

  deliver(deliveryTag: number, headers: Record<string, unknown> = {}, exchange = DESTINATION): void {
    this.onMessage?.({
      content: Buffer.from('{}'),
      fields: { deliveryTag, redelivered: false, exchange, routingKey: 'OrderPlaced' },
      properties: { headers: { [MessageHeaders.KEY]: `k${deliveryTag}`, ...headers } },
    } as unknown as amqp.ConsumeMessage);
  }
}

async function startSubscriber(settle: (delivery: Delivery) => Settlement | Promise<Settlement>) {
  const channels: FakeChannel[] = [];
  let refuse = 0;
  const lost = new Set<() => void>();
  const connection = {
    get: async () => {
      if (refuse > 0) {
        refuse -= 1;
        throw new Error('connection refused');
      }
      return {
        createChannel: async () => {
          channels.push(new FakeChannel());
          return channels[channels.length - 1];
        },
      };
    },
    onLost: (listener: () => void) => {
      lost.add(listener);
      return () => lost.delete(listener);
    },
  } as unknown as RabbitConnection;
  const deliveries: Delivery[] = [];
  const subscription: Subscription = {
    group: GROUP,
    destinations: [DESTINATION],
    retryTiers: { [DESTINATION]: [500] },
    concurrency: 2,
    onDeliveries: oneByOne(async (delivery) => {
      deliveries.push(delivery);
      return settle(delivery);
    }),
  };
  const subscriber = new RabbitSubscriber(
    {
      connection,
      prefetch: 8,
      log: new Logger('test'),
      clock,
      topology: 'declare',
      withQueueTypes: (t) => t,
    },
    subscription,
  );
  await subscriber.start();
  return {
    subscriber,
    channels,
    deliveries,
    refuseNext: (count: number) => (refuse = count),
    refusalsLeft: () => refuse,
    loseConnection: () => lost.forEach((listener) => listener()),
  };
}

describe(RabbitSubscriber.name, () => {
  useQuietWarnings();
  beforeEach(() => {
    clock = new FakeClock();
  });

  describe('start', () => {
    it('declares the work queue, the dead-letter queue and a TTL queue per tier that dead-letters back', async () => {
      const { channels } = await startSubscriber(() => ({ kind: 'ACK' }));
      expect([...channels[0].queues.keys()]).toEqual([
        WORK_QUEUE,
        `${WORK_QUEUE}.retry.500ms`,
        `${WORK_QUEUE}.dlq`,
      ]);
      expect(channels[0].queues.get(`${WORK_QUEUE}.retry.500ms`)?.arguments).toEqual({
        'x-message-ttl': 500,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': WORK_QUEUE,
      });
    });
  });

  describe('settlements', () => {
    it('acks on ACK, nacks without requeue on DROP and leaves the message on LEAVE', async () => {
      const answers: Settlement[] = [{ kind: 'ACK' }, { kind: 'DROP' }, { kind: 'LEAVE' }];
      const { channels } = await startSubscriber(() => answers.shift()!);
      [1, 2, 3].forEach((tag) => channels[0].deliver(tag));
      await clock.advance(0);
      expect(channels[0].acked).toEqual([1]);
      expect(channels[0].nacked).toEqual([[2, false]]);
    });
  });

  describe('unsettled deliveries', () => {
    const sameKey = { [MessageHeaders.KEY]: 'one-key' };

    it('gives a batch the pipeline could not handle back after a pause: closes its channel, the lane waiting meanwhile', async () => {
      let calls = 0;
      const { channels, deliveries } = await startSubscriber(() => {
        calls += 1;
        if (calls === 1) throw new Error('the database went away');
        return { kind: 'ACK' };
      });
      [1, 2].forEach((tag) => channels[0].deliver(tag, sameKey));
      await clock.advance(0);
      channels[0].deliver(3, sameKey); // arrives while the lane pauses: behind the others
      await clock.advance(249); // the re-subscribe backoff: 500 ms × 0.5
      expect(channels[0].close).not.toHaveBeenCalled();
      await clock.advance(1);
      // Closing returns every unacked message of the channel, in queue order; none is requeued alone.
      expect(channels[0].close).toHaveBeenCalledTimes(1);
      expect(channels[0].nacked).toEqual([]);
      expect(channels[0].acked).toEqual([]);
      expect(deliveries.map((d) => d.origin.deliveryTag)).toEqual([1]); // 3 waits for the broker's redelivery
    });

    it('gives back what the pipeline left unsettled while the consumer runs', async () => {
      const { channels } = await startSubscriber(() => ({ kind: 'LEAVE' }));
      channels[0].deliver(1);
      await clock.advance(250);
      expect(channels[0].close).toHaveBeenCalledTimes(1);
    });

    it('does not handle the messages of a channel that closed (the broker delivers them again)', async () => {
      const { channels, deliveries } = await startSubscriber(() => ({ kind: 'ACK' }));
      channels[0].deliver(1);
      channels[0].emit('close');
      await clock.advance(0);
      expect(deliveries).toEqual([]);
    });
  });

  describe('deliveries', () => {
    it('marks a message that came back from a retry queue with its tier, and no other', async () => {
      const { channels, deliveries } = await startSubscriber(() => ({ kind: 'ACK' }));
      const attempt = { [MessageHeaders.RETRY_ATTEMPT]: '2' };
      const death = (queue: string) => [{ queue, reason: 'expired', count: 1 }];
      channels[0].deliver(1, attempt); // published to the exchange by anyone
      channels[0].deliver(2, { ...attempt, 'x-death': death(`${WORK_QUEUE}.retry.500ms`) }, '');
      channels[0].deliver(3, { ...attempt, 'x-death': death('elsewhere') }, '');
      await clock.advance(0);
      expect(deliveries.map((d) => d.origin.retryTierMs)).toEqual([undefined, 500, undefined]);
    });
  });

  describe('tenants', () => {
    it("handles a tenant's deliveries while another tenant's wait for their database, on keys that hash alike", async () => {
      let databaseBack!: () => void;
      const back = new Promise<void>((resolve) => (databaseBack = resolve));
      const { channels } = await startSubscriber(async (delivery) => {
        if (delivery.wire.headers[MessageHeaders.TENANT] === 'down') await back;
        return { kind: 'ACK' };
      });
      const of = (tenant: string, key: string) => ({
        [MessageHeaders.TENANT]: tenant,
        [MessageHeaders.KEY]: key,
      });
      // The tenant that is down takes both of its slots (concurrency 2) on keys a and b.
      channels[0].deliver(1, of('down', 'a'));
      channels[0].deliver(2, of('down', 'b'));
      channels[0].deliver(3, of('down', 'c'));
      // The others' messages of the same keys go on meanwhile.
      channels[0].deliver(4, of('up', 'a'));
      channels[0].deliver(5, of('up', 'b'));
      channels[0].deliver(6, of('up', 'c'));
      await clock.advance(0);
      expect([...channels[0].acked].sort()).toEqual([4, 5, 6]); // lanes side by side: any order
      databaseBack();
      await clock.advance(0);
      expect([...channels[0].acked].sort()).toEqual([1, 2, 3, 4, 5, 6]);
    });
  });

  describe('reconnect', () => {
    it('subscribes again after the connection dropped, backing off while it is refused', async () => {
      const { channels, loseConnection, refuseNext } = await startSubscriber(() => ({ kind: 'ACK' }));
      refuseNext(1);
      loseConnection();
      await clock.advance(249); // 500 ms × 0.5
      expect(channels).toHaveLength(1);
      await clock.advance(1); // refused: the next try waits 1000 ms × 0.5
      expect(channels).toHaveLength(1);
      await clock.advance(499);
      expect(channels).toHaveLength(1);
      await clock.advance(1);
      expect(channels).toHaveLength(2);
    });

    it('is back within 2 s of the broker answering again, however long it was away', async () => {
      clock.setRandom(0.999); // the longest wait full jitter allows
      const { channels, loseConnection, refuseNext, refusalsLeft } = await startSubscriber(() => ({
        kind: 'ACK',
      }));
      refuseNext(8); // a broker away for a while: the backoff is at its ceiling
      loseConnection();
      let answeredAt = 0;
      for (let elapsed = 0; channels.length < 2 && elapsed < 120_000; elapsed += 10) {
        await clock.advance(10);
        if (refusalsLeft() === 0 && answeredAt === 0) answeredAt = clock.now(); // the last refusal: back now
      }
      expect(channels).toHaveLength(2);
      expect(clock.now() - answeredAt).toBeLessThanOrEqual(2_000);
    });

    it('does not reconnect once stopped', async () => {
      const { subscriber, channels, loseConnection } = await startSubscriber(() => ({ kind: 'ACK' }));
      loseConnection();
      await subscriber.stop();
      await clock.advance(60_000);
      expect(channels).toHaveLength(1);
    });
  });
});
