import { Logger } from '@nestjs/common';
import * as amqp from 'amqplib';
import { CancelTimer, Clock } from '../../common/clock';
import { destinationNames } from '../../topology/destination-names';
import { MessageHeaders } from '../../envelope/message-headers';
import { TopologyMode } from '../../messaging-options.interface';
import { MessagingTopology } from '../../topology/messaging-topology';
import { computeRetryDelay } from '../../retry/backoff';
import { BackoffOptions } from '../../retry/retry-policy.interface';
import { KeyedLanes } from '../keyed-lanes';
import { OutageLog } from '../outage-log';
import {
  Delivery,
  DeliveryControl,
  deliveryLane,
  Settlement,
  Subscription,
  topologyOf,
} from '../delivery-contract';
import { amqpHeaders } from './amqp-headers';
import { RabbitConnection } from './rabbit-connection';
import { declareRabbitTopology } from './rabbit-topology';

/** What the RabbitMQ transport lends a subscriber: its connection, prefetch, logger and clock. */
export interface RabbitSubscriberHost {
  readonly connection: RabbitConnection;
  readonly prefetch: number;
  readonly log: Logger;
  readonly clock: Clock;
  /** `declare`: (re)declare the subscription's topology on each channel; `verify`: the transport checked it. */
  readonly topology: TopologyMode;
  /** The topology with each group's queue type filled in (classic or quorum). */
  readonly withQueueTypes: (topology: MessagingTopology) => MessagingTopology;
}

/**
 * Subscribing again after the channel or connection dropped: 500 ms, ×2, at most 2 s, full jitter. The ceiling
 * bounds how long consumers stay away once the broker is back (a refused connection costs the broker nothing).
 */
export const RESUBSCRIBE_BACKOFF: Readonly<Required<BackoffOptions>> = Object.freeze({
  initialDelayMs: 500,
  multiplier: 2,
  maxDelayMs: 2_000,
});

/** A message received and not handled yet, with the channel that must settle it. */
interface WaitingMessage {
  readonly channel: amqp.Channel;
  readonly delivery: Delivery;
  readonly message: amqp.ConsumeMessage;
}

/**
 * Consumes a group's queues (declared by `nest-messaging topology apply`, or by the subscriber itself in
 * `topology: 'declare'` mode; see `declareRabbitTopology`). It only applies settlements (the pipeline
 * publishes any copy first): ACK acks, DROP nacks without requeue (never with: that is a hot loop). What the
 * pipeline leaves unsettled (LEAVE) while the consumer runs, or could not handle at all (it threw), goes
 * back to the broker after a pause (`giveBack`): unacked on a live channel it would wait until the channel
 * closed. Messages with one key are handled one at a time, in order; messages of a channel that closed are
 * not handled (the broker delivers them again).
 */
export class RabbitSubscriber {
  private channel?: amqp.Channel;
  private stopping = false;
  private failures = 0;
  private reconnect?: CancelTimer;
  private unlisten?: () => void;
  private readonly consumerTags: string[] = [];
  private readonly lanes: KeyedLanes;
  /** Per lane (tenant and key hash), the messages that arrived while it worked: its next batch. */
  private readonly waiting = new Map<string, WaitingMessage[]>();
  private readonly outage: OutageLog;
  /** Work queue → the destination it consumes. */
  private readonly origins = new Map<string, string>();
  /** Retry queue → its delay tier. */
  private readonly retryQueues = new Map<string, number>();
  /** Channels that closed: their unacked messages are the broker's again. */
  private readonly closedChannels = new WeakSet<amqp.Channel>();
  /** Consecutive batches given back unsettled: drives the pause before the next one. */
  private givenBack = 0;
  /** Ends the pauses of lanes giving back (a stop must not wait for them). */
  private readonly pauses = new Set<() => void>();

  constructor(
    private readonly host: RabbitSubscriberHost,
    private readonly subscription: Subscription,
  ) {
    this.lanes = new KeyedLanes(subscription.concurrency);
    this.outage = new OutageLog(host.log, `Consumer group ${subscription.group}`, host.clock);
  }

  async start(): Promise<void> {
    this.unlisten = this.host.connection.onLost(() => this.scheduleReconnect());
    await this.setup();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.reconnect?.();
    this.unlisten?.();
    this.pauses.forEach((end) => end());
    const channel = this.channel;
    this.channel = undefined;
    if (channel) {
      for (const tag of this.consumerTags.splice(0)) await channel.cancel(tag).catch(() => undefined);
    }
    await this.lanes.drain();
    // Closing returns prefetched, unacked messages to their queue.
    await channel?.close().catch(() => undefined);
  }

  private async setup(): Promise<void> {
    const { group, destinations, retryTiers } = this.subscription;
    const model = await this.host.connection.get();
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    channel.on('close', () => {
      this.closedChannels.add(channel);
      if (this.channel === channel) this.channel = undefined;
      if (!this.stopping) this.scheduleReconnect();
    });
    await channel.prefetch(this.host.prefetch);
    if (this.host.topology === 'declare') {
      await declareRabbitTopology(channel, this.host.withQueueTypes(topologyOf(this.subscription)));
    }
    for (const destination of destinations) {
      const workQueue = destinationNames.workQueue(destination, group);
      for (const tier of retryTiers[destination] ?? []) {
        this.retryQueues.set(destinationNames.retry(destination, group, tier), tier);
      }
      this.origins.set(workQueue, destination);
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
    this.outage.recovered();
  }

  private scheduleReconnect(): void {
    if (this.stopping || this.reconnect) return;
    this.consumerTags.length = 0;
    this.failures += 1;
    const delay = computeRetryDelay(RESUBSCRIBE_BACKOFF, this.failures, () => this.host.clock.random());
    this.reconnect = this.host.clock.setTimeout(() => {
      this.reconnect = undefined;
      this.setup().catch((error: Error) => {
        this.outage.failure(`re-subscribing failed (${error.message})`);
        this.scheduleReconnect();
      });
    }, delay);
  }

  private onMessage(channel: amqp.Channel, queue: string, message: amqp.ConsumeMessage): void {
    const delivery = this.toDelivery(queue, message);
    const { lane, share } = deliveryLane(
      delivery.wire.key ?? '',
      delivery.wire.headers[MessageHeaders.TENANT],
      this.subscription.concurrency,
    );
    const waiting = this.waiting.get(lane);
    if (waiting) {
      waiting.push({ channel, delivery, message });
      return;
    }
    // The lane is idle: start it; what arrives while it works waits and goes as the next batch.
    this.waiting.set(lane, [{ channel, delivery, message }]);
    void this.lanes.run(lane, () => this.drainLane(lane), share);
  }

  /** Hands the lane's waiting messages to the pipeline, as batches, until none waits. */
  private async drainLane(lane: string): Promise<void> {
    try {
      for (;;) {
        const waiting = this.waiting.get(lane) ?? [];
        const taken = waiting.splice(0, waiting.length);
        if (taken.length === 0) return;
        // A closed channel's messages come again on the new one: handling them now would only repeat them.
        const batch = taken.filter((w) => !this.closedChannels.has(w.channel));
        if (batch.length > 0) await this.handle(batch);
      }
    } finally {
      this.waiting.delete(lane);
    }
  }

  private async handle(batch: readonly WaitingMessage[]): Promise<void> {
    // Stopping: prefetched messages not started yet stay unacked; closing the channel returns them.
    if (this.stopping) return;
    const control: DeliveryControl = { keepAlive: async () => undefined, isStopping: () => this.stopping };
    let settlements: Settlement[];
    try {
      settlements = await this.subscription.onDeliveries(
        batch.map((waiting) => waiting.delivery),
        control,
      );
    } catch (error) {
      this.host.log.error(
        `Handling ${batch.length} deliveries from ${batch[0].delivery.origin.source} failed unexpectedly ` +
          `(they go back to the queue): ${(error as Error).message}`,
      );
      settlements = batch.map(() => ({ kind: 'LEAVE' }));
    }
    settlements.forEach((settlement, i) => this.settle(batch[i].channel, batch[i].message, settlement));
    const unsettled = batch.filter((_, i) => !['ACK', 'DROP'].includes(settlements[i].kind));
    if (unsettled.length === 0) this.givenBack = 0;
    else if (!this.stopping) await this.giveBack(unsettled);
  }

  /**
   * Gives messages left unsettled back to the broker: after a pause (the backoff of re-subscribing, so that a
   * failure that persists does not spin; the lane waits meanwhile, its keys' later messages behind it), their
   * channel is closed, which returns every message it had not acked, in queue order, and the subscriber
   * subscribes again. A requeue of these messages alone (`nack`) could let a later message of their key,
   * already on its way to us, overtake them; what other lanes were handling comes again too, and the inbox
   * skips what they committed.
   */
  private async giveBack(unsettled: readonly WaitingMessage[]): Promise<void> {
    this.givenBack += 1;
    await this.pause(computeRetryDelay(RESUBSCRIBE_BACKOFF, this.givenBack, () => this.host.clock.random()));
    if (this.stopping) return; // stopping closes the channel anyway
    for (const channel of new Set(unsettled.map((w) => w.channel))) {
      if (this.closedChannels.has(channel)) continue;
      this.closedChannels.add(channel);
      this.host.log.warn(
        `Closing the channel of consumer group ${this.subscription.group}: ${unsettled.length} ` +
          'deliveries could not be settled; the broker delivers them again.',
      );
      await channel.close().catch(() => undefined);
    }
  }

  /** Waits `delayMs`, or until the subscriber stops. */
  private pause(delayMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const end = () => {
        cancel();
        this.pauses.delete(end);
        resolve();
      };
      const cancel = this.host.clock.setTimeout(end, delayMs);
      this.pauses.add(end);
    });
  }

  private settle(channel: amqp.Channel, message: amqp.ConsumeMessage, settlement: Settlement): void {
    try {
      if (settlement.kind === 'ACK') channel.ack(message);
      else if (settlement.kind === 'DROP')
        channel.nack(message, false, false); // never requeue: a hot loop
      else if (settlement.kind === 'PAUSE') {
        // The retry engine never asks a transport without ordered streams to pause; leave it unacked.
        this.host.log.error(
          `RabbitMQ cannot pause a queue; message ${message.fields.deliveryTag} left unacked.`,
        );
      }
    } catch {
      // The channel closed: the broker redelivers the message (the inbox absorbs the repeat).
    }
  }

  /**
   * The tier of the group's retry queue a message came back from (its TTL expired and it was dead-lettered
   * into the work queue through the default exchange, so RabbitMQ's latest `x-death` names that queue), or
   * undefined: a message published to the destination's exchange, whatever headers its producer set.
   */
  private retryTierOf(message: amqp.ConsumeMessage): number | undefined {
    if (message.fields.exchange !== '') return undefined;
    const deaths: unknown = message.properties.headers?.['x-death'];
    if (!Array.isArray(deaths) || deaths.length === 0) return undefined;
    const latest = deaths[0] as { queue?: unknown; reason?: unknown };
    if (latest.reason !== 'expired' || typeof latest.queue !== 'string') return undefined;
    return this.retryQueues.get(latest.queue);
  }

  private toDelivery(queue: string, message: amqp.ConsumeMessage): Delivery {
    const headers = amqpHeaders(message);
    return {
      wire: {
        destination: this.origins.get(queue) ?? message.fields.exchange,
        key: headers[MessageHeaders.KEY] ?? null,
        headers,
        body: message.content,
      },
      origin: {
        source: queue,
        deliveryTag: message.fields.deliveryTag,
        redelivered: message.fields.redelivered,
        retryTierMs: this.retryTierOf(message),
      },
    };
  }
}
