import { Logger } from '@nestjs/common';
import { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { CancelTimer, Clock } from '../../common/clock';
import { destinationNames } from '../../topology/destination-names';
import { MessageHeaders } from '../../envelope/message-headers';
import { computeRetryDelay, RECONNECT_BACKOFF } from '../../retry/backoff';
import { KeyedLanes } from '../keyed-lanes';
import { OutageLog } from '../outage-log';
import { DeliveryControl, deliveryLane, Settlement, Subscription } from '../delivery-contract';
import { GroupMembership } from './kafkajs-group-coordinator.patch';
import { kafkaDelivery, kafkaHeader } from './kafka-delivery';
import { CONSUMER_SETTINGS, consumerTimings } from './kafka-consumer-settings';
import { PartitionFlow } from './partition-flow';
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

/** How often a fetch that waits for its partition's handlers heartbeats. */
const HEARTBEAT_EVERY_MS = 1_000;
/** How long a partition waits before a delivery the pipeline failed to answer is tried again. */
const AFTER_UNEXPECTED_ERROR_MS = 1_000;
/**
 * Unfinished messages (queued or running) a partition may have before its next fetch waits for them: about
 * one fetch of 1 KiB messages (kafkajs fetches up to 1 MiB per partition), so memory stays bounded.
 */
const MAX_OUTSTANDING_PER_PARTITION = 1_000;
/**
 * How often settled offsets are committed (a commit per partition at most, when its position moved): a
 * commit is a replicated write on the broker, one per message would double its work at 200 messages/s; a
 * crash redelivers at most this much more (the inbox absorbs it).
 */
const COMMIT_EVERY_MS = 100;
/** How long the subscriber waits for a replaced consumer to leave before the new one joins. */
const REPLACE_GRACE_MS = 1_000;
/**
 * How long stopping waits for a consumer that has not joined yet to disconnect: kafkajs waits for its join
 * request's answer first, which the broker gives only when the group's other members have rejoined or their
 * session expired (up to the session timeout). Past this the consumer is let go: it never restarts, and its
 * connection closes when the broker answers.
 */
const STOP_WHILE_JOINING_MS = 1_000;
/**
 * The rebalance timeout the consumer joins with (kafkajs's default): the broker completes a rebalance within
 * it, whatever the group's other members do.
 */
const REBALANCE_TIMEOUT_MS = 60_000;
/**
 * A join (or rejoin) still not complete this long after it began will not complete: the consumer is replaced
 * (it rejoins as the same member). A CI run of the Kafka failover suite saw kafkajs's rejoin after the group
 * coordinator's broker was killed neither answer nor fail: the group stopped consuming for good. A consumer
 * kafkajs fetches on with after a rejoin that failed is replaced too: its membership is in limbo.
 */
const JOIN_LIMIT_MS = REBALANCE_TIMEOUT_MS + 5_000;

/** How a delivery left the pipeline: settled (commit it) or held (halt the partition for `delayMs`). */
type LaneSettlement = { kind: 'SETTLED' } | { kind: 'HELD'; delayMs: number };

/**
 * Consumes a group's topics (and its retry topics) with kafkajs, committing offsets itself:
 * - fetching runs ahead of the handlers: a fetched message is queued in its partition's lane (a hash of its
 *   key) and the next fetch starts at once, so a message waits for its lane, not for the whole fetch before
 *   it; a partition with `MAX_OUTSTANDING_PER_PARTITION` unfinished messages holds its next fetch back;
 * - within a partition, messages of one key are handled in order, one at a time; different keys run side by
 *   side (up to `concurrency` handlers at once across partitions);
 * - the committed offset is the end of the contiguous run of settled messages: never past an unfinished one;
 *   commits go every `COMMIT_EVERY_MS` beside the fetch; a rebalance, a restart or a crash redelivers the
 *   unsettled rest (the inbox absorbs repeats);
 * - a PAUSE settlement stops handing out the partition's messages, pauses it, lets those in flight finish,
 *   waits, seeks back to the first unsettled offset and resumes; a retry-topic record is held so until due;
 * - a consumer whose group coordinator stops answering heartbeats (a dead broker) is replaced: kafkajs
 *   keeps asking the broker it found at join time, and only a new consumer looks the coordinator up again.
 * - `start()` returns once the consumer is connected and subscribed; it joins its group in the background
 *   (`joined` settles then): a group whose killed member holds its partitions until its session expires
 *   would otherwise hold the application's startup as long.
 * It only applies settlements: the pipeline decides them and publishes any copy.
 */
export class KafkaSubscriber {
  private consumer?: Consumer;
  private topics: string[] = [];
  private stopping = false;
  private readonly timers = new Set<CancelTimer>();
  /** Retry topic → the destination it retries and its delay tier. */
  private readonly retryTopics = new Map<string, { destination: string; tierMs: number }>();
  private readonly holds: RetryTopicHolds;
  /** The current consumer's partitions (`topic:partition`), since its last join. */
  private flows = new Map<string, PartitionFlow>();
  private readonly lanes: KeyedLanes;
  /** The member this subscriber's consumer is in its group, kept across restarts of the consumer. */
  private readonly membership: GroupMembership;
  private readonly timings: ReturnType<typeof consumerTimings>;
  /** When the group coordinator last answered (a join, a heartbeat, a commit); undefined while joining. */
  private answeredAt?: number;
  /** When a commit last failed (the coordinator may be gone). */
  private commitFailedAt?: number;
  /** Since when kafkajs fetches again on a membership whose rejoin did not complete (see `onBatch`). */
  private unjoinedSince?: number;
  /** Since when the consumer joins (or rejoins) the group: undefined once it joined. */
  private joiningSince?: number;
  /** When each commit under way started: kafkajs retries one for up to 30 s before it fails. */
  private readonly commitsUnderWay = new Set<{ startedAt: number }>();
  /** Whether a consumer of this subscriber has joined the group yet. */
  private hasJoined = false;
  private markJoined!: () => void;
  /** Settles when the first consumer has joined the group (never, if stopped before). */
  readonly joined = new Promise<void>((resolve) => (this.markJoined = resolve));

  constructor(
    private readonly host: KafkaSubscriberHost,
    private readonly subscription: Subscription,
  ) {
    this.lanes = new KeyedLanes(subscription.concurrency);
    this.holds = new RetryTopicHolds(host.clock);
    this.membership = new GroupMembership(subscription.group);
    this.timings = consumerTimings(host.sessionTimeoutMs);
  }

  /**
   * Connects and subscribes (what fails here is the broker away or a refusal: the caller retries), then
   * joins the group in the background; the transport has declared or checked the topology first.
   */
  async start(): Promise<void> {
    const { destinations, retryTiers, group } = this.subscription;
    for (const destination of destinations) {
      this.topics.push(destination);
      for (const tier of retryTiers[destination] ?? []) {
        const retryTopic = destinationNames.retry(destination, group, tier);
        this.retryTopics.set(retryTopic, { destination, tierMs: tier });
        this.topics.push(retryTopic);
      }
    }
    await this.run();
    this.every(this.timings.heartbeatIntervalMs, () => this.checkCoordinator());
    this.every(COMMIT_EVERY_MS, () => this.flows.forEach((flow) => flow.commit()));
  }

  /** Stops fetching, lets running handlers finish, commits what they settled and leaves the group. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.timers.forEach((cancel) => cancel());
    this.timers.clear();
    const flows = [...this.flows.values()];
    flows.forEach((flow) => flow.dropQueued());
    await this.lanes.drain();
    // Before the disconnect: kafkajs ignores commits once its consumer stopped.
    await Promise.all(flows.map((flow) => flow.flush()));
    const disconnected = this.consumer?.disconnect().catch(() => undefined);
    // Not joined yet: kafkajs's disconnect waits for the join's answer (up to the session timeout).
    await (this.hasJoined
      ? disconnected
      : Promise.race([disconnected, this.host.clock.sleep(STOP_WHILE_JOINING_MS)]));
    this.consumer = undefined;
    this.membership.left();
  }

  private async run(): Promise<void> {
    const consumer = this.host.kafka.consumer({
      groupId: this.subscription.group,
      allowAutoTopicCreation: false,
      sessionTimeout: this.host.sessionTimeoutMs,
      rebalanceTimeout: REBALANCE_TIMEOUT_MS,
      heartbeatInterval: this.timings.heartbeatIntervalMs,
      maxWaitTimeInMs: CONSUMER_SETTINGS.maxWaitTimeInMs,
      // A consumer this subscriber stopped or replaced never restarts (a join failing after its disconnect).
      retry: { ...CONSUMER_SETTINGS.retry, restartOnFailure: async () => current() },
      // After a restart the new consumer rejoins as the member it was (see GroupMembership).
      partitionAssigners: this.membership.assigners(),
    });
    this.consumer = consumer;
    this.flows = new Map();
    this.answeredAt = undefined;
    this.unjoinedSince = undefined;
    this.joiningSince = this.host.clock.now();
    const current = () => this.consumer === consumer && !this.stopping;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      if (!current()) return;
      this.membership.joined(payload.memberId);
      this.host.outage.recovered();
      this.answeredAt = this.host.clock.now();
      this.unjoinedSince = undefined;
      this.joiningSince = undefined;
      this.hasJoined = true;
      this.markJoined();
      // A join restarts kafkajs's fetching at the committed offsets: what the old flows queued comes again.
      this.retireFlows();
    });
    consumer.on(consumer.events.HEARTBEAT, () => {
      if (current() && this.answeredAt !== undefined) this.answeredAt = this.host.clock.now();
    });
    consumer.on(consumer.events.REBALANCING, () => {
      if (!current()) return;
      this.answeredAt = undefined;
      this.joiningSince = this.host.clock.now();
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!current()) return;
      // kafkajs restarts the consumer itself: it joins again (no coordinator to wait for meanwhile).
      if (payload.restart) {
        this.answeredAt = undefined;
        this.joiningSince = this.host.clock.now();
        return;
      }
      // kafkajs gave up (a non-retriable error): start a fresh consumer rather than stop consuming.
      this.replace(consumer, `crashed (${payload.error.message})`, 1);
    });
    await consumer.connect();
    await consumer.subscribe({ topics: this.topics, fromBeginning: true });
    // kafkajs's run() resolves once the consumer has joined the group, which waits for the group's other
    // members (a killed one's partitions until its session expires): not awaited. A failed join goes to CRASH
    // (kafkajs restarts the consumer or gives up, see above); run() itself does not reject.
    consumer
      .run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.subscription.concurrency,
        eachBatch: (payload) => this.onBatch(consumer, payload),
      })
      .catch((error: Error) => this.replace(consumer, `its join failed (${error.message})`, 1));
  }

  /**
   * Replaces the consumer when its group coordinator has not answered (no heartbeat, no commit) for
   * `coordinatorSilenceMs` while a commit failed or has been waiting as long: kafkajs keeps sending
   * heartbeats and commits to the broker it found at join time, also once that broker is dead and another
   * one coordinates the group, retrying a commit for up to 30 s. A new consumer asks which broker coordinates
   * the group and rejoins as the same member. (Heartbeats alone also pause while kafkajs retries a fetch, with
   * the coordinator fine: no reason to restart.) Also replaces it when kafkajs fetches again after a rejoin
   * that did not complete and a commit then fails or waits as long, whatever the heartbeats say (kafkajs 2.2
   * keeps the commits' coordinator from the last completed join; `OffsetManager` never looks it up again).
   */
  private checkCoordinator(): void {
    const consumer = this.consumer;
    if (!consumer || this.stopping) return;
    const now = this.host.clock.now();
    if (this.joiningSince !== undefined && now - this.joiningSince >= JOIN_LIMIT_MS) {
      return this.replace(consumer, `its join has not completed in ${now - this.joiningSince} ms`, 0);
    }
    if (this.answeredAt === undefined) return;
    const limit = this.timings.coordinatorSilenceMs;
    const failedSince = (since: number) => this.commitFailedAt !== undefined && this.commitFailedAt >= since;
    const stuck = [...this.commitsUnderWay].some((c) => now - c.startedAt >= limit);
    // Heartbeats prove nothing then: they go to the coordinator the failed rejoin found, commits do not.
    if (this.unjoinedSince !== undefined && (failedSince(this.unjoinedSince) || stuck)) {
      return this.replace(consumer, 'its rejoin did not complete and its commits fail', 0);
    }
    const silentMs = now - this.answeredAt;
    if (silentMs < limit || !(failedSince(this.answeredAt) || stuck)) return;
    this.replace(consumer, `its group coordinator has not answered for ${silentMs} ms`, 0);
  }

  /** Drops `consumer` (it stops, leaves if it can) and starts a new one after the reconnect backoff. */
  private replace(consumer: Consumer, reason: string, attempt: number): void {
    if (this.consumer !== consumer) return;
    this.host.outage.failure(`consumer group ${this.subscription.group}: ${reason}; restarting its consumer`);
    this.consumer = undefined;
    this.retireFlows();
    const left = consumer.disconnect().catch(() => undefined);
    const grace = this.host.clock.sleep(REPLACE_GRACE_MS);
    void Promise.race([left, grace]).then(() => this.restart(attempt));
  }

  /** Starts a new consumer, at once for attempt 0, else after the reconnect backoff; again on failure. */
  private restart(attempt: number): void {
    const delayMs =
      attempt === 0 ? 0 : computeRetryDelay(RECONNECT_BACKOFF, attempt, () => this.host.clock.random());
    this.after(delayMs, () => {
      if (this.stopping) return;
      this.run().catch((error: Error) => {
        this.host.outage.failure(
          `restarting consumer group ${this.subscription.group} failed (${error.message})`,
        );
        const failed = this.consumer;
        this.consumer = undefined;
        void failed?.disconnect().catch(() => undefined);
        this.restart(attempt + 1);
      });
    });
  }

  private retireFlows(): void {
    this.flows.forEach((flow) => flow.retire());
    this.flows = new Map();
  }

  private flowOf(consumer: Consumer, topic: string, partition: number): PartitionFlow {
    const key = `${topic}:${partition}`;
    let flow = this.flows.get(key);
    if (!flow) {
      flow = new PartitionFlow(topic, partition, (offset) => this.commit(consumer, topic, partition, offset));
      this.flows.set(key, flow);
    }
    return flow;
  }

  /**
   * Queues the batch's messages in their lanes and returns, so that kafkajs fetches on; waits (heartbeating)
   * only while the partition has too many unfinished messages.
   */
  private async onBatch(consumer: Consumer, payload: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = payload.batch;
    if (this.consumer !== consumer || this.stopping) return;
    // A batch after a rebalance without a join: kafkajs's rejoin failed with an error it retries (the new
    // coordinator still loading the group) and it fetches on with the old membership, committing to the
    // coordinator of its last join for good. Watched from now on (see checkCoordinator).
    if (this.answeredAt === undefined) this.unjoinedSince = this.answeredAt = this.host.clock.now();
    const flow = this.flowOf(consumer, topic, partition);
    const retry = this.retryTopics.get(topic);
    const lanes = new Map<string, string>(); // lane → its share
    let last: string | undefined;
    for (const message of messages) {
      if (flow.halted || flow.retired || this.stopping || !payload.isRunning() || payload.isStale()) break;
      const notDueFor = retry ? this.holds.notDueFor(topic, partition, message, retry.tierMs) : 0;
      if (notDueFor > 0) {
        flow.withhold(message.offset);
        this.halt(consumer, flow, notDueFor);
        break;
      }
      const { lane, share } = deliveryLane(
        message.key?.toString() ?? '',
        kafkaHeader(message, MessageHeaders.TENANT),
        this.subscription.concurrency,
      );
      if (!flow.enqueue(lane, message)) break;
      lanes.set(lane, share);
      last = message.offset;
    }
    // kafkajs fetches after the last message handed out; the commit stays with the settled ones.
    if (last !== undefined) payload.resolveOffset(last);
    lanes.forEach((share, lane) => this.schedule(consumer, flow, lane, share));
    if (flow.outstanding > MAX_OUTSTANDING_PER_PARTITION) {
      await this.whileAlive(flow.whenAtMost(MAX_OUTSTANDING_PER_PARTITION / 2), () => payload.heartbeat());
    }
  }

  /** Runs a lane of `flow` once a handler slot is free: everything queued in it by then, together. */
  private schedule(consumer: Consumer, flow: PartitionFlow, lane: string, share: string): void {
    const { topic, partition } = flow;
    void this.lanes.run(
      `${topic}:${partition}:${lane}`,
      async () => {
        const messages = flow.take(lane);
        if (messages.length === 0) return;
        const control: DeliveryControl = {
          // kafkajs's fetch loop runs on beside the handlers and heartbeats itself.
          keepAlive: async () => undefined,
          isStopping: () => this.stopping,
          isHalted: () => flow.halted || flow.retired || this.stopping,
        };
        const settlements = await this.deliver(topic, partition, messages, control);
        const held = settlements.filter((s) => s.kind === 'HELD');
        if (held.length > 0) this.halt(consumer, flow, Math.max(...held.map((s) => s.delayMs)));
        flow.finish(
          messages,
          settlements.map((s) => s.kind === 'SETTLED'),
        );
        if (flow.halted && flow.outstanding === 0) this.rewindLater(consumer, flow);
      },
      share,
    );
  }

  /** Stops handing out `flow`'s messages and pauses its partition (the rewind follows once it is quiet). */
  private halt(consumer: Consumer, flow: PartitionFlow, delayMs: number): void {
    const first = !flow.halted;
    flow.halt(delayMs);
    if (!first || flow.retired || this.consumer !== consumer) return;
    consumer.pause([{ topic: flow.topic, partitions: [flow.partition] }]);
    if (flow.outstanding === 0) this.rewindLater(consumer, flow);
  }

  /** Commits what `flow` settled, then after its delay rewinds its partition to the first unsettled offset. */
  private rewindLater(consumer: Consumer, flow: PartitionFlow): void {
    const resumeAt = flow.resumeAt();
    void flow.flush().then(() =>
      this.after(flow.holdDelayMs, () => {
        if (this.stopping || this.consumer !== consumer) return;
        const { topic, partition } = flow;
        if (resumeAt !== undefined) consumer.seek({ topic, partition, offset: resumeAt });
        consumer.resume([{ topic, partitions: [partition] }]);
        // Fetching starts again at `resumeAt`: a new flow takes the partition from there.
        const key = `${topic}:${partition}`;
        this.flows.get(key)?.retire();
        this.flows.delete(key);
      }),
    );
  }

  /**
   * Waits for `work`, heartbeating meanwhile; a failed heartbeat (a rebalance started) ends the wait and
   * goes to kafkajs, which rejoins.
   */
  private async whileAlive(work: Promise<unknown>, heartbeat: () => Promise<void>): Promise<void> {
    const finished = work.then(() => true);
    const tick = () => this.host.clock.sleep(HEARTBEAT_EVERY_MS).then(() => false);
    while (!(await Promise.race([finished, tick()]))) await heartbeat();
  }

  private async deliver(
    topic: string,
    partition: number,
    messages: readonly KafkaMessage[],
    control: DeliveryControl,
  ): Promise<LaneSettlement[]> {
    const retry = this.retryTopics.get(topic);
    const deliveries = messages.map((message) =>
      kafkaDelivery(topic, retry?.destination ?? topic, partition, message, retry?.tierMs),
    );
    let settlements: Settlement[];
    try {
      settlements = await this.subscription.onDeliveries(deliveries, control);
    } catch (error) {
      this.host.log.error(
        `Handling ${topic}[${partition}]@${messages[0].offset} and ${messages.length - 1} more failed ` +
          `unexpectedly (${(error as Error).message}); they are delivered again in ${AFTER_UNEXPECTED_ERROR_MS} ms.`,
      );
      return messages.map(() => ({ kind: 'HELD', delayMs: AFTER_UNEXPECTED_ERROR_MS }));
    }
    return settlements.map((settlement): LaneSettlement => {
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

  /** Commits `offset + 1` (the next one to read); false when it failed. */
  private async commit(
    consumer: Consumer,
    topic: string,
    partition: number,
    offset: string,
  ): Promise<boolean> {
    const underWay = { startedAt: this.host.clock.now() };
    this.commitsUnderWay.add(underWay);
    try {
      await consumer.commitOffsets([{ topic, partition, offset: (BigInt(offset) + 1n).toString() }]);
      if (this.consumer === consumer && this.answeredAt !== undefined)
        this.answeredAt = this.host.clock.now();
      return true;
    } catch (error) {
      if (this.consumer === consumer) this.commitFailedAt = this.host.clock.now();
      // A rebalance took the partition, or the coordinator is away: the next owner starts after the last
      // commit (the inbox absorbs repeats). Said like the client's own errors: once when failures start, then
      // a summary (a commit goes out every 100 ms per partition: a line each would flood an outage's log).
      this.host.outage.failure(
        `commit of ${topic}[${partition}]@${offset} failed: ${(error as Error).message}`,
      );
      return false;
    } finally {
      this.commitsUnderWay.delete(underWay);
    }
  }

  /** Runs `then` after `delayMs` unless the subscriber stops first. */
  private after(delayMs: number, then: () => void): void {
    const cancel = this.host.clock.setTimeout(() => {
      this.timers.delete(cancel);
      then();
    }, delayMs);
    this.timers.add(cancel);
  }

  /** Runs `then` every `intervalMs` until the subscriber stops. */
  private every(intervalMs: number, then: () => void): void {
    this.timers.add(this.host.clock.setInterval(then, intervalMs));
  }
}
