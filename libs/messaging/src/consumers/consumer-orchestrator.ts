import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { CancelTimer, Clock } from '../common/clock';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { RunningConsumers } from '../observability/observed-sources';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { computeRetryDelay, RECONNECT_BACKOFF } from '../retry/backoff';
import { MessagingTopologyMismatchError } from '../topology/messaging-topology-mismatch.error';
import { MessagingTopologyMissingError } from '../topology/messaging-topology-missing.error';
import { MessageTransport } from '../transports/message-transport.interface';
import { ConsumerHandle, Subscription } from '../transports/delivery-contract';
import { DeliveryPipeline } from './delivery-pipeline';
import { HandlerRegistry } from './handler-registry';
import { groupRetryTiers } from './retry-tiers';

/** A join slower than this is logged (the application served meanwhile). */
const SLOW_JOIN_MS = 5_000;

/**
 * Starts a subscription per consumer group at application bootstrap (or when `MessagingServer` listens)
 * and stops them before shutdown: stop fetching, finish in-flight handlers, commit, disconnect. A broker
 * that is down at startup does not stop the application: subscribing is retried in the background. A
 * broker that answers that the topology is missing (`topology: 'verify'`) stops it, naming what is missing.
 * Bootstrap does not wait for a Kafka consumer to join its group (a killed member's session to expire): the
 * group counts as joining (`joiningGroups()`, health `consumers()` down) until it has.
 */
@Injectable()
export class ConsumerOrchestrator
  implements RunningConsumers, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(ConsumerOrchestrator.name);
  private readonly handles = new Map<string, ConsumerHandle>();
  /** Groups whose consumer has joined (receives deliveries). */
  private readonly joined = new Set<string>();
  private readonly retryTimers = new Set<CancelTimer>();
  private started = false;
  private stopping = false;
  private bootstrapped = false;
  private startRequested = false;
  private readonly startListeners: Array<() => void> = [];

  constructor(
    private readonly registry: HandlerRegistry,
    private readonly pipeline: DeliveryPipeline,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly metrics: MessagingMetrics,
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.bootstrapped = true;
    if (this.options.consumers.autoStart || this.startRequested) await this.start();
  }

  /**
   * Starts now if the application has bootstrapped (handlers are discovered then), otherwise as soon as it
   * has: `MessagingServer.listen()` may run before or after `app.init()`.
   */
  async requestStart(): Promise<void> {
    this.startRequested = true;
    if (this.bootstrapped) await this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** Subscribes every consumer group; idempotent. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.pipeline.resume();
    try {
      await Promise.all(this.registry.groupNames().map((group) => this.subscribe(group, 1)));
    } catch (error) {
      await this.stop(); // what did subscribe stops again: the application does not start
      throw error;
    }
    this.startListeners.splice(0).forEach((listener) => listener());
  }

  /** Runs `listener` once consumers have started (at once if they have). */
  afterStart(listener: () => void): void {
    if (this.started) listener();
    else this.startListeners.push(listener);
  }

  /** Unsubscribes every group, letting in-flight deliveries finish. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.stopping = true;
    this.started = false;
    this.retryTimers.forEach((cancel) => cancel());
    this.retryTimers.clear();
    this.pipeline.stop();
    const handles = [...this.handles.values()];
    this.handles.clear();
    this.joined.clear();
    await Promise.all(handles.map((h) => h.stop()));
  }

  /** Groups whose subscription is running: subscribed and joined, receiving deliveries. */
  runningGroups(): string[] {
    return [...this.handles.keys()].filter((group) => this.joined.has(group));
  }

  /**
   * Groups started but not receiving deliveries yet: a Kafka consumer joining its group (waiting for a killed
   * member's session to expire, say), or subscribing again after a failure (the broker away). Empty when the
   * consumers are not started.
   */
  joiningGroups(): string[] {
    if (!this.started) return [];
    return this.registry.groupNames().filter((group) => !this.joined.has(group));
  }

  private async subscribe(group: string, attempt: number): Promise<void> {
    if (this.stopping) return;
    try {
      const handle = await this.transport.subscribe(this.subscription(group));
      if (this.stopping) return void (await handle.stop());
      this.handles.set(group, handle);
      if (attempt > 1) this.logger.log(`Consumer group ${group} subscribed after ${attempt} attempts.`);
      this.whenJoined(group, handle);
    } catch (error) {
      // The broker answered that the topology is missing or differs: a startup error, not an outage to wait out.
      const topologyError =
        error instanceof MessagingTopologyMissingError || error instanceof MessagingTopologyMismatchError;
      if (topologyError && attempt === 1) throw error;
      this.metrics.brokerErrors.inc({ transport: this.transport.kind, operation: 'subscribe' });
      const delay = computeRetryDelay(RECONNECT_BACKOFF, attempt, () => this.clock.random());
      this.logger.warn(
        `Subscribing consumer group ${group} failed (${(error as Error).message}); retrying in ${delay} ms.`,
      );
      const cancel = this.clock.setTimeout(() => {
        this.retryTimers.delete(cancel);
        void this.subscribe(group, attempt + 1);
      }, delay);
      this.retryTimers.add(cancel);
    }
  }

  /** Counts `group` as running once its consumer has joined (at once without `handle.joined`). */
  private whenJoined(group: string, handle: ConsumerHandle): void {
    if (!handle.joined) return void this.joined.add(group);
    const since = this.clock.now();
    void handle.joined.then(() => {
      if (this.handles.get(group) !== handle) return; // stopped meanwhile
      this.joined.add(group);
      const tookMs = this.clock.now() - since;
      if (tookMs >= SLOW_JOIN_MS) {
        this.logger.log(
          `Consumer group ${group} joined after ${Math.round(tookMs / 100) / 10} s (the broker waits for ` +
            "the group's other members to rejoin, or for a stopped one's session to expire).",
        );
      }
    });
  }

  private subscription(group: string): Subscription {
    const destinations = [...this.registry.destinationsOf(group).keys()];
    const retryTiers = Object.fromEntries(
      destinations.map((destination) => [
        destination,
        groupRetryTiers(this.registry, this.options, group, destination),
      ]),
    );
    return {
      group,
      destinations,
      retryTiers,
      concurrency: this.options.consumers.concurrency,
      onDeliveries: (deliveries, control) => this.pipeline.handleBatch(group, deliveries, control),
    };
  }
}
