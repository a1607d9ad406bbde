import * as amqp from 'amqplib';
import { destinationNames } from '../../dead-letter/destination-names';
import { deadLetterCopy, retryCopy } from '../../dead-letter/failure-copy';
import { MessageHeaders } from '../../envelope/message-headers';
import { WireMessage } from '../../envelope/wire-message';
import { publishUntilConfirmed, StoppedError } from '../publish-until-confirmed';
import { Delivery, DeliveryActions, Subscription, topologyOf } from '../subscription.interface';
import { KeyedLanes } from '../keyed-lanes';
import type { RabbitMqTransport } from './rabbitmq-transport';
import { amqpHeaders } from './amqp-headers';
import { declareRabbitTopology } from './rabbit-topology';

/**
 * Consumes a group's queues (declared by `nest-messaging topology apply`, or by the subscriber itself in
 * `topology: 'declare'` mode; see `declareRabbitTopology`).
 * Messages are acked only after the handler's transaction committed (or a dead-letter / retry copy was
 * confirmed); nothing is ever nacked with requeue. Messages with one key are handled one at a time, in order.
 */
export class RabbitSubscriber {
  private channel?: amqp.Channel;
  private stopping = false;
  private failures = 0;
  private reconnectTimer?: NodeJS.Timeout;
  private unlisten?: () => void;
  private readonly lanes: KeyedLanes;
  /** Work queue → the destination it consumes. */
  private readonly origins = new Map<string, string>();

  constructor(
    private readonly transport: RabbitMqTransport,
    private readonly subscription: Subscription,
  ) {
    this.lanes = new KeyedLanes(subscription.concurrency);
  }

  async start(): Promise<void> {
    this.unlisten = this.transport.connection.onLost(() => this.scheduleReconnect());
    await this.setup();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
    this.unlisten?.();
    const channel = this.channel;
    this.channel = undefined;
    if (channel) {
      for (const tag of this.consumerTags.splice(0)) await channel.cancel(tag).catch(() => undefined);
    }
    await this.lanes.drain();
    // Closing returns prefetched, unacked messages to their queue.
    await channel?.close().catch(() => undefined);
  }

  private readonly consumerTags: string[] = [];

  private async setup(): Promise<void> {
    const { group, destinations } = this.subscription;
    const model = await this.transport.connection.get();
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    channel.on('close', () => {
      if (this.channel === channel) this.channel = undefined;
      if (!this.stopping) this.scheduleReconnect();
    });
    await channel.prefetch(this.transport.settings.prefetch);
    if (this.transport.settings.topology === 'declare') {
      await declareRabbitTopology(channel, topologyOf(this.subscription));
    }
    for (const destination of destinations) {
      this.origins.set(destinationNames.workQueue(destination, group), destination);
    }
    this.channel = channel;
    for (const destination of destinations) {
      const workQueue = destinationNames.workQueue(destination, group);
      const { consumerTag } = await channel.consume(
        workQueue,
        (message) => message && this.onMessage(channel, workQueue, message),
        { noAck: false },
      );
      this.consumerTags.push(consumerTag);
    }
    this.failures = 0;
  }

  private scheduleReconnect(): void {
    if (this.stopping || this.reconnectTimer) return;
    this.consumerTags.length = 0;
    this.failures += 1;
    const delay = Math.min(10_000, 250 * 2 ** Math.min(this.failures, 6));
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.setup().catch((error: Error) => {
        this.transport.log.warn(`Re-subscribing group ${this.subscription.group} failed: ${error.message}`);
        this.scheduleReconnect();
      });
    }, delay);
  }

  private onMessage(channel: amqp.Channel, queue: string, message: amqp.ConsumeMessage): void {
    const delivery = this.toDelivery(queue, message);
    void this.lanes.run(delivery.wire.key ?? '', () => this.handle(channel, delivery, message));
  }

  private async handle(
    channel: amqp.Channel,
    delivery: Delivery,
    message: amqp.ConsumeMessage,
  ): Promise<void> {
    // Stopping: prefetched messages not started yet stay unacked; closing the channel returns them.
    if (this.stopping) return;
    const { group } = this.subscription;
    const origin = delivery.wire.destination;
    const settle = (how: 'ack' | 'drop') => {
      try {
        if (how === 'ack') channel.ack(message);
        else channel.nack(message, false, false); // never requeue: that is a hot loop
      } catch {
        // The channel closed: the broker redelivers the message (the inbox absorbs the repeat).
      }
    };
    const copyThenAck = async (copy: WireMessage): Promise<void> => {
      await publishUntilConfirmed((m) => this.transport.publishToQueues(m), copy, {
        isStopping: () => this.stopping,
        keepAlive: async () => undefined,
        log: this.transport.log,
      });
      settle('ack');
    };
    const actions: DeliveryActions = {
      ack: async () => settle('ack'),
      reject: async () => settle('drop'),
      deadLetter: (headers) =>
        copyThenAck(
          deadLetterCopy(
            delivery.wire,
            destinationNames.deadLetter(origin, group),
            headers,
            this.subscription.deadLetter,
          ),
        ),
      retryLater: (tierMs, dueAt, headers) =>
        copyThenAck(retryCopy(delivery.wire, destinationNames.retry(origin, group, tierMs), headers, dueAt)),
      pauseAndRetry: async () => {
        throw new Error('RabbitMQ cannot pause an ordered stream; the retry engine never asks it to.');
      },
      keepAlive: async () => undefined,
    };
    try {
      await this.subscription.onDelivery(delivery, actions);
    } catch (error) {
      if (error instanceof StoppedError) return;
      this.transport.log.error(
        `Handling a delivery from ${delivery.origin.source} failed unexpectedly: ${(error as Error).message}`,
      );
    }
  }

  private toDelivery(queue: string, message: amqp.ConsumeMessage): Delivery {
    const headers = amqpHeaders(message);
    const retried = Number.parseInt(headers[MessageHeaders.RETRY_ATTEMPT] ?? '0', 10);
    return {
      wire: {
        destination: this.origins.get(queue) ?? message.fields.exchange,
        key: headers[MessageHeaders.KEY] ?? null,
        headers,
        body: message.content,
      },
      attempt: (Number.isFinite(retried) && retried > 0 ? retried : 0) + 1,
      origin: {
        source: queue,
        deliveryTag: message.fields.deliveryTag,
        redelivered: message.fields.redelivered,
      },
    };
  }
}
