import { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { destinationNames } from '../../dead-letter/destination-names';
import { deadLetterCopy, retryCopy } from '../../dead-letter/failure-copy';
import { WireMessage } from '../../envelope/wire-message';
import { KeyedLanes } from '../keyed-lanes';
import { publishUntilConfirmed, StoppedError } from '../publish-until-confirmed';
import { DeliveryActions, Subscription } from '../subscription.interface';
import type { KafkaTransport } from './kafka-transport';
import { kafkaDelivery, notDueForMs } from './kafka-delivery';
import { OffsetTracker } from './offset-tracker';

/** How a delivery left the pipeline: settled (commit it), held for a retry in place, or left for redelivery. */
type Settlement = { kind: 'SETTLED' } | { kind: 'PAUSED'; delayMs: number } | { kind: 'UNSETTLED' };

/**
 * Consumes a group's topics (and its retry topics) with kafkajs, committing offsets itself:
 * - within a partition, messages of one key are handled in order, one at a time; different keys run side by
 *   side (up to `concurrency` handlers at once across partitions);
 * - the committed offset is the end of the contiguous run of settled messages: never past an unfinished one;
 *   a rebalance or a crash redelivers the unsettled rest (the inbox absorbs repeats);
 * - pause-and-retry stops handing out the partition's messages, lets those in flight finish, pauses it,
 *   waits, seeks back to the first unsettled offset and resumes;
 * - a message in a retry topic is held (pause, seek back) until its due time.
 */
export class KafkaSubscriber {
  private consumer?: Consumer;
  private stopping = false;
  /** Failed attempts of a message being retried in place: `topic:partition:offset` → count. */
  private readonly pausedAttempts = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Retry topic → the destination it retries. */
  private readonly origins = new Map<string, string>();
  /** Batches being handled: shutdown waits for them so that their settled offsets get committed. */
  private readonly activeBatches = new Set<Promise<void>>();
  private readonly lanes: KeyedLanes;

  constructor(
    private readonly kafka: Kafka,
    private readonly transport: KafkaTransport,
    private readonly subscription: Subscription,
    private readonly sessionTimeoutMs: number,
  ) {
    this.lanes = new KeyedLanes(subscription.concurrency);
  }

  /** Starts consuming; the transport has declared or checked the topology first. */
  async start(): Promise<void> {
    const { group, destinations, retryTiers } = this.subscription;
    const topics: string[] = [];
    for (const destination of destinations) {
      topics.push(destination);
      for (const tier of retryTiers[destination] ?? []) {
        const retryTopic = destinationNames.retry(destination, group, tier);
        this.origins.set(retryTopic, destination);
        topics.push(retryTopic);
      }
    }
    await this.run(topics);
  }

  private async run(topics: string[]): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.subscription.group,
      allowAutoTopicCreation: false,
      sessionTimeout: this.sessionTimeoutMs,
      heartbeatInterval: Math.max(1_000, Math.floor(this.sessionTimeoutMs / 10)),
      maxWaitTimeInMs: 250,
      retry: { retries: 10, initialRetryTime: 300, maxRetryTime: 10_000 },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (payload.restart || this.stopping || this.consumer !== consumer) return;
      // kafkajs gave up (a non-retriable error): start a fresh consumer rather than stop consuming.
      this.transport.log.warn(
        `Consumer group ${this.subscription.group} crashed (${payload.error.message}); restarting.`,
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
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        if (this.stopping) return;
        this.run(topics).catch((error: Error) => {
          this.transport.log.warn(
            `Restarting group ${this.subscription.group} failed (${error.message}); trying again.`,
          );
          this.restart(topics, attempt + 1);
        });
      },
      Math.min(30_000, 1_000 * attempt),
    );
    this.timers.add(timer);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.timers.forEach((t) => clearTimeout(t));
    this.timers.clear();
    // Let running batches finish their current message and commit (kafkajs ignores commits once stopped).
    await Promise.allSettled([...this.activeBatches]);
    await this.consumer?.disconnect().catch(() => undefined);
    this.consumer = undefined;
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
    const running: Array<Promise<void>> = [];
    try {
      for (const message of messages) {
        if (hold.stopped || this.stopping || !payload.isRunning() || payload.isStale()) break;
        tracker.dispatch(message.offset);
        const notDueFor = this.origins.has(topic) ? notDueForMs(message) : 0;
        if (notDueFor > 0) {
          stopHere(notDueFor);
          break;
        }
        const task = async () => {
          // The partition stops before this one: it stays unsettled and comes again after the rewind.
          if (hold.stopped || this.stopping) return;
          const settlement = await this.deliver(topic, partition, message, heartbeat);
          if (settlement.kind === 'SETTLED') tracker.settle(message.offset);
          else stopHere(settlement.kind === 'PAUSED' ? settlement.delayMs : 0);
        };
        running.push(this.lanes.run(message.key?.toString() ?? '', task));
      }
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
    while (
      !(await Promise.race([finished, new Promise<boolean>((r) => setTimeout(() => r(false), 1_000))]))
    ) {
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
    message: KafkaMessage,
    heartbeat: () => Promise<void>,
  ): Promise<Settlement> {
    const slot = `${topic}:${partition}:${message.offset}`;
    const destination = this.origins.get(topic) ?? topic;
    const delivery = kafkaDelivery(topic, destination, partition, message, this.pausedAttempts.get(slot));
    const { group } = this.subscription;
    const origin = delivery.wire.destination;
    const state: { settlement: Settlement } = { settlement: { kind: 'UNSETTLED' } };
    const publishThenSettle = async (copy: WireMessage): Promise<void> => {
      await publishUntilConfirmed((m) => this.transport.publish(m), copy, {
        isStopping: () => this.stopping,
        keepAlive: heartbeat,
        log: this.transport.log,
      });
      state.settlement = { kind: 'SETTLED' };
    };
    const actions: DeliveryActions = {
      ack: async () => void (state.settlement = { kind: 'SETTLED' }),
      reject: async () => void (state.settlement = { kind: 'SETTLED' }),
      deadLetter: (headers) =>
        publishThenSettle(
          deadLetterCopy(
            delivery.wire,
            destinationNames.deadLetter(origin, group),
            headers,
            this.subscription.deadLetter,
          ),
        ),
      retryLater: (tierMs, dueAt, headers) =>
        publishThenSettle(
          retryCopy(delivery.wire, destinationNames.retry(origin, group, tierMs), headers, dueAt),
        ),
      pauseAndRetry: async (delayMs) => {
        this.pausedAttempts.set(slot, delivery.attempt);
        state.settlement = { kind: 'PAUSED', delayMs };
      },
      keepAlive: () => heartbeat(),
    };
    try {
      await this.subscription.onDelivery(delivery, actions);
    } catch (error) {
      if (!(error instanceof StoppedError)) throw error;
    }
    if (state.settlement.kind === 'SETTLED') this.pausedAttempts.delete(slot);
    return state.settlement;
  }

  /** Pauses the partition and, after `delayMs`, rewinds it to `offset` and resumes. */
  private holdPartition(topic: string, partition: number, offset: string, delayMs: number): void {
    const consumer = this.consumer;
    if (!consumer) return;
    consumer.pause([{ topic, partitions: [partition] }]);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopping || this.consumer !== consumer) return;
      consumer.seek({ topic, partition, offset });
      consumer.resume([{ topic, partitions: [partition] }]);
    }, delayMs);
    this.timers.add(timer);
  }

  private async commit(topic: string, partition: number, offset: string): Promise<void> {
    try {
      await this.consumer?.commitOffsets([{ topic, partition, offset: (BigInt(offset) + 1n).toString() }]);
    } catch (error) {
      // A rebalance took the partition: its new owner starts after the last commit (the inbox absorbs repeats).
      this.transport.log.warn(
        `Commit of ${topic}[${partition}]@${offset} failed: ${(error as Error).message}`,
      );
    }
  }
}
