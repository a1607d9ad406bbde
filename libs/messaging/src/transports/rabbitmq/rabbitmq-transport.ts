import { Logger } from '@nestjs/common';
import { Clock, systemClock } from '../../common/clock';
import { WireMessage } from '../../envelope/wire-message';
import { TopologyMode } from '../../messaging-options.interface';
import {
  destinationsOf,
  JournalTopology,
  MessagingTopology,
  RabbitQueueType,
} from '../../topology/messaging-topology';
import { MessagingTopologyMismatchError } from '../../topology/messaging-topology-mismatch.error';
import { MessagingTopologyMissingError } from '../../topology/messaging-topology-missing.error';
import { MessageTransport, PublishOptions, TransportHealth } from '../message-transport.interface';
import { PublishOutcome } from '../publish-outcome';
import { ConsumerHandle, Subscription, topologyOf } from '../delivery-contract';
import { TransportCapabilities } from '../../retry/transport-capabilities';
import { RabbitConnection } from './rabbit-connection';
import { RabbitPublisher } from './rabbit-publisher';
import { RabbitSubscriber } from './rabbit-subscriber';
import { RabbitGroupTopology, withQueueTypes } from './rabbit-queue-arguments';
import { failureRouteOf, RabbitCopyRoutes } from './rabbit-failure-routes';
import { declareRabbitTopology, inspectRabbitTopology, RabbitTopologyFindings } from './rabbit-topology';

/** Settings the RabbitMQ transport runs with (validated module options). */
export interface RabbitMqTransportSettings {
  readonly url: string;
  readonly connectionName: string;
  readonly heartbeatSeconds: number;
  readonly prefetch: number;
  readonly concurrency: number;
  /** Declare exchanges and queues, or only check that they exist (the default). */
  readonly topology: TopologyMode;
  /** Type of the work, retry and dead-letter queues of groups that name none. Default `classic`. */
  readonly queueType?: RabbitQueueType;
  /** The queue type by destination, over `queueType`. */
  readonly queueTypes?: Readonly<Record<string, RabbitQueueType>>;
  /** The journals by destination (`JournalTopology`), prepared with their destinations. */
  readonly journals?: Readonly<Record<string, Omit<JournalTopology, 'destination'>>>;
}

/**
 * RabbitMQ through amqplib: a durable topic exchange per destination, a queue per consumer group, publisher
 * confirms with `mandatory`, manual acks, and delayed retries through TTL queues that dead-letter back. A
 * group's retry and dead-letter copies go through its failure exchange, bound to those queues only.
 */
export class RabbitMqTransport implements MessageTransport {
  readonly kind = 'rabbitmq' as const;
  readonly capabilities: TransportCapabilities = {
    orderedStream: false,
    delayedDelivery: true,
    retryDestinations: false,
  };
  readonly connection: RabbitConnection;
  private readonly log = new Logger(RabbitMqTransport.name);
  private readonly publisher: RabbitPublisher;
  private readonly subscribers = new Set<RabbitSubscriber>();
  private lastPublishError?: string;
  /** Quorum queues found at startup declared without the delivery limit: declared again as they are. */
  private readonly withoutDeliveryLimit = new Set<string>();
  /** The failure exchange of each queue of the groups prepared, for their copies. */
  private readonly copyRoutes = new RabbitCopyRoutes();
  /** Failure exchanges found missing at startup and logged. */
  private readonly withoutFailureExchange = new Set<string>();

  constructor(
    readonly settings: RabbitMqTransportSettings,
    private readonly clock: Clock = systemClock,
  ) {
    this.connection = new RabbitConnection(settings.url, settings.heartbeatSeconds, settings.connectionName);
    this.publisher = new RabbitPublisher(this.connection, settings.connectionName, settings.topology, clock);
  }

  async publish(messages: readonly WireMessage[], options: PublishOptions = {}): Promise<PublishOutcome[]> {
    if (messages.length === 0) return [];
    const outcomes = await this.publisher.publish(messages, undefined, options.signal);
    const failure = outcomes.find((o) => o.status !== 'CONFIRMED');
    this.lastPublishError = failure && 'error' in failure ? failure.error.message : undefined;
    return outcomes;
  }

  /**
   * Publishes each copy to the queue its `destination` names: through the failure exchange of the group whose
   * retry queue or DLQ it is (prepared by `prepareTopology`), else through the default exchange (a redrive's
   * copy to a work queue, an archive; a group whose failure exchange does not exist yet).
   */
  publishCopies(copies: readonly WireMessage[]): Promise<PublishOutcome[]> {
    return this.publisher.publish(copies, (queue) => this.copyRoutes.exchangeFor(queue));
  }

  async ensureDestinations(destinations: readonly string[]): Promise<void> {
    await this.prepareTopology({ destinations, groups: [] });
  }

  /**
   * Declares what is missing. With quorum queues, first checks the existing ones (`inspectRabbitTopology`):
   * one of another type stops here, one declared without the delivery limit is declared again as it is.
   */
  async declareTopology(topology: MessagingTopology): Promise<void> {
    if (this.withQueueTypes(topology).groups.some((g) => g.queueType === 'quorum')) {
      await this.inspect(topology);
    }
    const model = await this.connection.get();
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    try {
      await declareRabbitTopology(channel, this.withQueueTypes(topology));
    } finally {
      await channel.close().catch(() => undefined);
    }
    topology.groups.forEach((group) => this.copyRoutes.add(failureRouteOf(group)));
  }

  /**
   * What is missing, failure exchanges included. Queues that exist with other arguments (a classic queue where
   * a quorum one is configured) throw `MessagingTopologyMismatchError`; queues the user may not re-declare to
   * compare are logged as unchecked (`nest-messaging topology check`, run as an admin, compares them).
   */
  async missingTopology(topology: MessagingTopology): Promise<string[]> {
    const findings = await this.inspect(topology);
    return [...findings.missing, ...findings.withoutFailureExchange.map((e) => `exchange '${e}'`)];
  }

  /**
   * The topology with each group's queue type filled in from the settings, the quorum queues found
   * without a delivery limit (`RabbitGroupTopology`), and the journal the settings ask for of each of its
   * destinations that has none in it.
   */
  withQueueTypes(topology: MessagingTopology): MessagingTopology {
    const groups = withQueueTypes(
      topology.groups,
      this.settings.queueTypes ?? {},
      this.settings.queueType ?? 'classic',
    ).map((g): RabbitGroupTopology => ({ ...g, withoutDeliveryLimit: this.withoutDeliveryLimit }));
    const configured = this.settings.journals ?? {};
    const named = new Set((topology.journals ?? []).map((j) => j.destination));
    const journals: JournalTopology[] = [
      ...(topology.journals ?? []),
      ...destinationsOf(topology)
        .filter((d) => !named.has(d) && Object.hasOwn(configured, d))
        .map((destination) => ({ destination, ...configured[destination] })),
    ];
    return { ...topology, groups, ...(journals.length > 0 ? { journals } : {}) };
  }

  /**
   * Checks the topology: a queue of other arguments throws `MessagingTopologyMismatchError`; queues that
   * could not be compared, and quorum queues declared without the delivery limit (remembered, to be declared
   * again as they are), are logged with what to do.
   */
  private async inspect(topology: MessagingTopology): Promise<RabbitTopologyFindings> {
    const findings = await inspectRabbitTopology(await this.connection.get(), this.withQueueTypes(topology));
    if (findings.mismatched.length > 0)
      throw new MessagingTopologyMismatchError(this.kind, findings.mismatched);
    if (findings.unchecked.length > 0) {
      this.log.warn(
        `Could not compare the type and arguments of ${findings.unchecked.join(', ')}: no configure permission. ` +
          'Run `nest-messaging topology check` as an admin to compare them.',
      );
    }
    for (const { queue, policy } of findings.withoutDeliveryLimit) {
      if (this.withoutDeliveryLimit.has(queue)) continue;
      this.withoutDeliveryLimit.add(queue);
      this.log.warn(
        `Quorum queue '${queue}' was declared without a delivery limit and dead-letter route (before ` +
          'nest-reliable-messaging set them). RabbitMQ 4.x drops a message returned to it more than 20 times, and ' +
          "every closed channel returns its unacked messages. A queue's arguments cannot change: give it a policy " +
          `(one policy applies to a queue; merge the keys into one that already matches it): ${policy}`,
      );
    }
    return findings;
  }

  /**
   * Declares the topology (`declare` mode), or checks it and throws `MessagingTopologyMissingError`. A
   * missing failure exchange does not stop a service: its topology was declared by a version before them, and
   * the group's copies go through the default exchange, as they did then, until an admin applies it again.
   */
  async prepareTopology(topology: MessagingTopology): Promise<void> {
    if (this.settings.topology === 'declare') return this.declareTopology(topology);
    const findings = await this.inspect(topology);
    if (findings.missing.length > 0) {
      throw new MessagingTopologyMissingError(this.kind, findings.missing, this.withQueueTypes(topology));
    }
    for (const group of topology.groups) {
      const route = failureRouteOf(group);
      if (!findings.withoutFailureExchange.includes(route.exchange)) this.copyRoutes.add(route);
      else if (!this.withoutFailureExchange.has(route.exchange)) {
        this.withoutFailureExchange.add(route.exchange);
        this.log.warn(
          `Exchange '${route.exchange}' does not exist (the topology was declared before nest-reliable-messaging ` +
            `had failure exchanges): consumer group ${group.group} sends its retry and dead-letter copies through ` +
            "the default exchange, which needs write on 'amq.default', a right to publish into every queue of the " +
            'vhost. Apply the topology as an admin (`nest-messaging topology apply`), restart the service, then ' +
            "drop 'amq.default' from its write permission (docs/guide/08-redrive.md).",
        );
      }
    }
  }

  async subscribe(subscription: Subscription): Promise<ConsumerHandle> {
    await this.prepareTopology(topologyOf(subscription));
    const subscriber = new RabbitSubscriber(
      {
        connection: this.connection,
        prefetch: this.settings.prefetch,
        log: this.log,
        clock: this.clock,
        topology: this.settings.topology,
        withQueueTypes: (topology) => this.withQueueTypes(topology),
      },
      subscription,
    );
    this.subscribers.add(subscriber);
    await subscriber.start();
    return {
      stop: async () => {
        this.subscribers.delete(subscriber);
        await subscriber.stop();
      },
    };
  }

  health(): TransportHealth {
    return {
      connected: this.connection.connected,
      lastError: this.connection.error ?? this.lastPublishError,
      refusal: this.connection.refusal,
    };
  }

  async checkHealth(): Promise<TransportHealth> {
    try {
      await this.connection.get();
      return { connected: true };
    } catch (error) {
      return { connected: false, lastError: (error as Error).message, refusal: this.connection.refusal };
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscribers].map((s) => s.stop()));
    this.subscribers.clear();
    await this.publisher.close();
    await this.connection.close();
  }
}
