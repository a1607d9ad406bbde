import { EventEmitter } from 'node:events';
import * as amqp from 'amqplib';
import { WireMessage } from '../../envelope/wire-message';
import { RabbitConnection } from './rabbit-connection';
import { RabbitPublisher } from './rabbit-publisher';

/** A confirm channel that records each publish; the test plays the broker's answers. */
class FakeConfirmChannel extends EventEmitter {
  readonly sent: Array<{
    exchange: string;
    routingKey: string;
    options: amqp.Options.Publish;
    confirm: (error: unknown) => void;
  }> = [];
  /** After this many publishes the channel is closed: amqplib then throws from `publish`. */
  closedAfter = Number.POSITIVE_INFINITY;

  publish(
    exchange: string,
    routingKey: string,
    _content: Buffer,
    options: amqp.Options.Publish,
    confirm: (error: unknown) => void,
  ): boolean {
    if (this.sent.length >= this.closedAfter) throw new Error('Channel closed');
    this.sent.push({ exchange, routingKey, options, confirm });
    return true;
  }

  async assertExchange(): Promise<void> {}

  /** basic.return of the `index`-th message, as the broker sends it back: with the properties it was sent with. */
  returnMessage(index: number): void {
    this.emit('return', {
      content: Buffer.from(''),
      fields: { replyCode: 312, replyText: 'NO_ROUTE', exchange: '', routingKey: 'nowhere' },
      properties: this.sent[index].options,
    });
  }
}

function publisherOver(channel: FakeConfirmChannel): RabbitPublisher {
  const connection = {
    get: async () => ({ createConfirmChannel: async () => channel }),
  } as unknown as RabbitConnection;
  return new RabbitPublisher(connection, 'unit', 'declare');
}

/** A copy of an undecodable message: it had no message id, so neither has the copy. */
function copyTo(queue: string): WireMessage {
  return { destination: queue, key: null, headers: {}, body: Buffer.from('not json') };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Copies through the default exchange, as an admin's redrive sends them. */
const viaDefault = () => '';

describe(RabbitPublisher.name, () => {
  describe('publish', () => {
    it('matches a return to its own publish, not to another message with the same (empty) id', async () => {
      const channel = new FakeConfirmChannel();
      const publisher = publisherOver(channel);
      const outcomes = publisher.publish([copyTo('orders.billing.dlq'), copyTo('no-such-queue')], viaDefault);
      await flush();
      expect(channel.sent).toHaveLength(2);

      // The broker returns the second (unroutable), then acks both at once (a multiple ack).
      channel.returnMessage(1);
      channel.sent.forEach(({ confirm }) => confirm(null));
      expect((await outcomes).map((o) => o.status)).toEqual(['CONFIRMED', 'REJECTED']);
    });

    it('matches returns for two messages that share a message id', async () => {
      const channel = new FakeConfirmChannel();
      const publisher = publisherOver(channel);
      const id = { 'msg.id': '01a22ee6-b000-76ff-ad7c-a6c00f5d24ec' };
      const outcomes = publisher.publish(
        [
          { ...copyTo('no-such-queue'), headers: id },
          { ...copyTo('orders.billing.dlq'), headers: id },
        ],
        viaDefault,
      );
      await flush();
      channel.returnMessage(0);
      channel.sent.forEach(({ confirm }) => confirm(null));
      expect((await outcomes).map((o) => o.status)).toEqual(['REJECTED', 'CONFIRMED']);
    });

    it('answers AMBIGUOUS, and does not throw, when the channel closed under the publish', async () => {
      const channel = new FakeConfirmChannel();
      const publisher = publisherOver(channel);
      channel.closedAfter = 1; // the connection dropped after the first message went out
      const outcomes = publisher.publish(
        [copyTo('orders.billing.dlq'), copyTo('orders.billing.dlq')],
        viaDefault,
      );
      await flush();
      channel.emit('close');
      channel.sent[0].confirm(new Error('channel closed')); // amqplib fails what was not confirmed
      const answered = await outcomes;
      expect(answered.map((o) => o.status)).toEqual(['AMBIGUOUS', 'AMBIGUOUS']);
      expect(answered[1].status !== 'CONFIRMED' && answered[1].error.message).toMatch(/channel closed/i);
    });

    it('sends each copy through the exchange chosen for its queue, the queue as routing key', async () => {
      const channel = new FakeConfirmChannel();
      const publisher = publisherOver(channel);
      const routes: Record<string, string> = { 'orders.billing.dlq': 'orders.billing.failures' };
      const outcomes = publisher.publish(
        [copyTo('orders.billing.dlq'), copyTo('orders.billing')],
        (queue) => routes[queue] ?? '',
      );
      await flush();
      channel.sent.forEach(({ confirm }) => confirm(null));
      await outcomes;
      expect(channel.sent.map(({ exchange, routingKey }) => [exchange, routingKey])).toEqual([
        ['orders.billing.failures', 'orders.billing.dlq'],
        ['', 'orders.billing'],
      ]);
    });

    it('sends nothing of a publish whose caller stopped waiting', async () => {
      const channel = new FakeConfirmChannel();
      const publisher = publisherOver(channel);
      const abandoned = new AbortController();
      abandoned.abort();
      const outcomes = await publisher.publish([copyTo('orders.billing.dlq')], viaDefault, abandoned.signal);
      expect(outcomes.map((o) => o.status)).toEqual(['AMBIGUOUS']);
      expect(channel.sent).toHaveLength(0);
    });
  });
});
