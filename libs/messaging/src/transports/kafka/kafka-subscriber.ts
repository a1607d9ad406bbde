import { Logger } from '@nestjs/common';
import { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { CancelTimer, Clock } from '../../common/clock';
import { destinationNames } from '../../dead-letter/destination-names';
import { computeRetryDelay, RECONNECT_BACKOFF } from '../../retry/backoff';
import { KeyedLanes } from '../keyed-lanes';
import { OutageLog } from '../outage-log';
import {
  deliveriesHandler,
  DeliveryControl,
  laneOf,
  Settlement,
  Subscription,
} from '../subscription.interface';
import { GroupMembership } from './group-membership';
import { kafkaDelivery } from './kafka-delivery';
import { OffsetTracker } from './offset-tracker';
import { RetryTopicHolds } from './retry-topic-holds';

/**
 * What the Kafka transport lends a subscriber: its client, logger and clock. (Topics are the transport's:
 * it declares or verifies the subscription's topology before the subscriber starts.)
 */
export interface KafkaSubscriberHost {
  readonly kafka: Kafka;
  readonly sessionTimeoutMs: number;
  readonly log: Logger;
  readonly clock: Clock;
  /** Where connection failures go; told when the consumer works again. */
  readonly outage: OutageLog;
}

/** How often a batch whose handlers still run heartbeats. */
const HEARTBEAT_EVERY_MS = 1_000;
/** How long a partition waits before a delivery the pipeline failed to answer is tried again. */
const AFTER_UNEXPECTED_ERROR_MS = 1_000;

/** How a delivery left the pipeline, for the batch: settled (commit it), held (pause), or left. */
type BatchSettlement = { kind: 'SETTLED' } | { kind: 'HELD'; delayMs: number };

/**
 * Consumes a group's topics (and its retry topics) with kafkajs, committing offsets itself:
 * - within a partition, messages of one key are handled in order, one at a time; different keys run side by
 *   side (up to `concurrency` handlers at once across partitions);
 * - the committed offset is the end of the contiguous run of settled messages: never past an unfinished one;
 *   a rebalance or a crash redelivers the unsettled rest (the inbox absorbs repeats);
 * - a PAUSE settlement stops handing out the partition's messages, lets those in flight finish, pauses it,
 *   waits, seeks back to the first unsettled offset and resumes;
 * - a message in a retry topic is held (pause, seek back) until its due time.
 * It only applies settlements: the pipeline decides them and publishes any copy.
 */
export class KafkaSubscriber {
  private consumer?: Consumer;
  private stopping = false;
  private readonly timers = new Set<CancelTimer>();
  /** Retry topic → the destination it retries and its delay tier. */
  private readonly retryTopics = new Map<string, { destination: string; tierMs: number }>();
  private readonly holds: RetryTopicHolds;
  /** Batches being handled: shutdown waits for them so that their settled offsets get committed. */
  private readonly activeBatches = new Set<Promise<void>>();
  private readonly lanes: KeyedLanes;
  /** The member this subscriber's consumer is in its group, kept across restarts of the consumer. */
  private readonly membership: GroupMembership;
  private readonly handleDeliveries: ReturnType<typeof deliveriesHandler>;

  constructor(
    private readonly host: KafkaSubscriberHost,
    private readonly subscription: Subscription,
  ) {
    this.lanes = new KeyedLanes(subscription.concurrency);
    this.handleDeliveries = deliveriesHandler(subscription);
    this.holds = new RetryTopicHolds(host.clock);
    this.membership = new GroupMembership(subscription.group);
  }

  /** Starts consuming; the transport has declared or checked the topology first. */
  async start(): Promise<void> {
    const { group, destinations, retryTiers } = this.subscription;
    const topics: string[] = [];
    for (const destination of destinations) {
      topics.push(destination);
      for (const tier of retryTiers[destination] ?? []) {
        const retryTopic = destinationNames.retry(destination, group, tier);
        this.retryTopics.set(retryTopic, { destination, tierMs: tier });
        topics.push(retryTopic);
      }
    }
    await this.run(topics);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.timers.forEach((cancel) => cancel());
    this.timers.clear();
    // Let running batches finish their current message and commit (kafkajs ignores commits once stopped).
    await Promise.allSettled([...this.activeBatches]);
    await this.consumer?.disconnect().catch(() => undefined);
    this.consumer = undefined;
    this.membership.left();
  }

  private async run(topics: string[]): Promise<void> {
    const { sessionTimeoutMs } = this.host;
    const consumer = this.host.kafka.consumer({
      groupId: this.subscription.group,
      allowAutoTopicCreation: false,
      sessionTimeout: sessionTimeoutMs,
      heartbeatInterval: Math.max(1_000, Math.floor(sessionTimeoutMs / 10)),
      maxWaitTimeInMs: 250,
      retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 },
      // After a lost connection the restarted consumer rejoins as the member it was (see GroupMembership).
      partitionAssigners: this.membership.assigners(),
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      this.membership.joined(payload.memberId);
      this.host.outage.recovered();
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (payload.restart || this.stopping || this.consumer !== consumer) return;
      // kafkajs gave up (a non-retriable error): start a fresh consumer rather than stop consuming.
      this.host.outage.failure(
        `consumer group ${this.subscription.group} crashed (${payload.error.message}); restarting it`,
      );
      void consumer.disconnect().catch(() => undefined);
      this.restart(topics, 1);
    });
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.subscription.concurrency,
      eachBatch: (payload) => this.track(this.onBatch(payload)),
    });
  }

  private restart(topics: string[], attempt: number): void {
    this.after(computeRetryDelay(RECONNECT_BACKOFF, attempt, Math.random), () => {
      if (this.stopping) return;
      this.run(topics).catch((error: Error) => {
        this.host.outage.failure(
          `restarting consumer group ${this.subscription.group} failed (${error.message})`,
        );
        this.restart(topics, attempt + 1);
      });
    });
  }

  /** Runs `then` after `delayMs` unless the subscriber stops first. */
  private after(delayMs: number, then: () => void): void {
    const cancel = this.host.clock.setTimeout(() => {
      this.timers.delete(cancel);
      then();
    }, delayMs);
    this.timers.add(cancel);
  }

  private async track(batch: Promise<void>): Promise<void> {
    this.activeBatches.add(batch);
    try {
      await batch;
    } finally {
      this.activeBatches.delete(batch);
    }
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    const heartbeat = () => payload.heartbeat();
    const tracker = new OffsetTracker();
    const hold: { stopped: boolean; delayMs: number } = { stopped: false, delayMs: 0 };
    const stopHere = (delayMs = 0) => {
      hold.stopped = true;
      hold.delayMs = Math.max(hold.delayMs, delayMs);
    };
    const control: DeliveryControl = {
      keepAlive: heartbeat,
      isStopping: () => this.stopping,
      isHalted: () => hold.stopped || this.stopping,
    };
    // One lane per key hash: a lane's messages go to the pipeline together (one transaction), in order.
    const lanes = new Map<number, KafkaMessage[]>();
    for (const message of messages) {
      if (hold.stopped || this.stopping || !payload.isRunning() || payload.isStale()) break;
      tracker.dispatch(message.offset);
      const retry = this.retryTopics.get(topic);
      const notDueFor = retry ? this.holds.notDueFor(topic, partition, message, retry.tierMs) : 0;
      if (notDueFor > 0) {
        stopHere(notDueFor);
        break;
      }
      const lane = laneOf(message.key?.toString() ?? '', this.subscription.concurrency);
      const laneMessages = lanes.get(lane);
      if (laneMessages) laneMessages.push(message);
      else lanes.set(lane, [message]);
    }
    const running = [...lanes].map(([lane, laneMessages]) =>
      this.lanes.run(`${topic}:${partition}:${lane}`, async () => {
        // The partition stops before these: they stay unsettled and come again after the rewind.
        if (hold.stopped || this.stopping) return;
        const settlements = await this.deliver(topic, partition, laneMessages, control);
        settlements.forEach((settlement, i) => {
          if (settlement.kind === 'SETTLED') tracker.settle(laneMessages[i].offset);
          else stopHere(settlement.delayMs);
        });
      }),
    );
    try {
      await this.whileAlive(Promise.all(running), heartbeat, () => stopHere());
    } finally {
      // Only the contiguous run of settled messages: never past an unfinished one.
      const upTo = tracker.committable();
      if (upTo !== undefined) {
        payload.resolveOffset(upTo);
        await this.commit(topic, partition, upTo);
      }
      const resumeAt = tracker.firstUnsettled();
      if (hold.stopped && resumeAt !== undefined && !this.stopping) {
        this.holdPartition(topic, partition, resumeAt, hold.delayMs);
      }
    }
  }

  /**
   * Waits for the batch's handlers, heartbeating meanwhile. A failed heartbeat (a rebalance started) stops
   * handing out messages; the ones in flight finish, then the error goes to kafkajs, which rejoins.
   */
  private async whileAlive(
    work: Promise<unknown>,
    heartbeat: () => Promise<void>,
    stop: () => void,
  ): Promise<void> {
    const finished = work.then(() => true);
    let failure: unknown;
    const tick = () => this.host.clock.sleep(HEARTBEAT_EVERY_MS).then(() => false);
    while (!(await Promise.race([finished, tick()]))) {
      try {
        await heartbeat();
      } catch (error) {
        failure ??= error;
        stop();
      }
    }
    if (failure !== undefined) throw failure instanceof Error ? failure : new Error('heartbeat failed');
  }

  private async deliver(
    topic: string,
    partition: number,
    messages: readonly KafkaMessage[],
    control: DeliveryControl,
  ): Promise<BatchSettlement[]> {
    const retry = this.retryTopics.get(topic);
    const deliveries = messages.map((message) =>
      kafkaDelivery(topic, retry?.destination ?? topic, partition, message, retry?.tierMs),
    );
    let settlements: Settlement[];
    try {
      settlements = await this.handleDeliveries(deliveries, control);
    } catch (error) {
      this.host.log.error(
        `Handling ${topic}[${partition}]@${messages[0].offset} and ${messages.length - 1} more failed ` +
          `unexpectedly (${(error as Error).message}); they are delivered again in ${AFTER_UNEXPECTED_ERROR_MS} ms.`,
      );
      return messages.map(() => ({ kind: 'HELD', delayMs: AFTER_UNEXPECTED_ERROR_MS }));
    }
    return settlements.map((settlement): BatchSettlement => {
      switch (settlement.kind) {
        case 'ACK':
        case 'DROP':
          return { kind: 'SETTLED' };
        case 'PAUSE':
          return { kind: 'HELD', delayMs: settlement.delayMs };
        case 'LEAVE':
          return { kind: 'HELD', delayMs: 0 };
      }
    });
  }

  /** Pauses the partition and, after `delayMs`, rewinds it to `offset` and resumes. */
  private holdPartition(topic: string, partition: number, offset: string, delayMs: number): void {
    const consumer = this.consumer;
    if (!consumer) return;
    consumer.pause([{ topic, partitions: [partition] }]);
    this.after(delayMs, () => {
      if (this.stopping || this.consumer !== consumer) return;
      consumer.seek({ topic, partition, offset });
      consumer.resume([{ topic, partitions: [partition] }]);
    });
  }

  private async commit(topic: string, partition: number, offset: string): Promise<void> {
    try {
      await this.consumer?.commitOffsets([{ topic, partition, offset: (BigInt(offset) + 1n).toString() }]);
    } catch (error) {
      // A rebalance took the partition: its new owner starts after the last commit (the inbox absorbs repeats).
      this.host.log.warn(`Commit of ${topic}[${partition}]@${offset} failed: ${(error as Error).message}`);
    }
  }
}
