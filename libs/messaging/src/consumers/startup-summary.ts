import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { destinationNames } from '../topology/destination-names';
import { FailureCategory } from '../errors/failure-category';
import { MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { decideRetry } from '../retry/retry-decision-engine';
import { ResolvedRetryPolicy, RetryMode } from '../retry/retry-policy.interface';
import { TransportCapabilities } from '../retry/transport-capabilities';
import { MessageTransport } from '../transports/message-transport.interface';
import { oldestVersionOf, versionOf } from '../envelope/upcast';
import { HandlerDefinition, HandlerRegistry } from './handler-registry';
import { unhandledTypeAction } from './unhandled-types';

/**
 * One log block at startup that says what this service will do: the transport and where it connects
 * (never a password), the relay, and per consumer group each handler with what a failure leads to, as the
 * retry engine will decide it on this transport, and where its dead letters go. A mode the transport overrides
 * (INLINE on an ordered Kafka topic, where ordering PRESERVE pauses the partition instead) is said here rather
 * than discovered in a failure's log line.
 */
@Injectable()
export class StartupSummary implements OnApplicationBootstrap {
  private readonly logger = new Logger('Messaging');

  constructor(
    private readonly registry: HandlerRegistry,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
  ) {}

  onApplicationBootstrap(): void {
    summaryLines(this.options, this.registry, this.transport.capabilities).forEach((line) =>
      this.logger.log(line),
    );
    summaryWarnings(this.options, this.registry).forEach((line) => this.logger.warn(line));
  }
}

/** RabbitMQ's default `consumer_timeout`: a delivery unacked this long closes its channel. */
const RABBITMQ_CONSUMER_TIMEOUT_MS = 1_800_000;

/** What the summary warns about: a hold window RabbitMQ's default consumer timeout would cut short. */
export function summaryWarnings(options: ResolvedMessagingOptions, registry: HandlerRegistry): string[] {
  const { windowMs } = options.consumers.versionHold;
  if (options.transport.kind !== 'rabbitmq' || registry.size === 0) return [];
  if (windowMs < RABBITMQ_CONSUMER_TIMEOUT_MS) return [];
  return [
    `consumers.versionHold.windowMs is ${windowMs} ms: a held message stays unacked that long, and RabbitMQ ` +
      `closes the channel of a delivery unacked past its consumer_timeout (default ${RABBITMQ_CONSUMER_TIMEOUT_MS} ms), ` +
      "which delivers the channel's messages again. Keep the window under the broker's consumer_timeout.",
  ];
}

/** The startup summary, line by line. */
export function summaryLines(
  options: ResolvedMessagingOptions,
  registry: HandlerRegistry,
  capabilities: TransportCapabilities,
): string[] {
  const { relay, consumers, topology } = options;
  const lines = [
    `Service ${options.serviceName} on ${describeTransport(options)}; topology ${topology}; ` +
      (relay.enabled
        ? `outbox relay on (batches of ${relay.batchSize}, lease ${relay.leaseMs} ms, safety poll every ${relay.pollIntervalMs} ms)`
        : 'outbox relay off'),
  ];
  const groups = registry.groupNames();
  if (groups.length === 0) lines.push('No consumer groups (no @IdempotentHandler() in this application).');
  for (const group of groups) {
    const destinations = registry.destinationsOf(group);
    const unhandled =
      unhandledTypeAction(options, group) === 'settle' ? 'settled and counted' : 'dead-lettered';
    lines.push(
      `Consumer group ${group}: ${[...destinations.keys()].join(', ')} (${consumers.concurrency} lanes, ` +
        `batches of up to ${consumers.batchSize}${consumers.autoStart ? '' : ', started by MessagingServer'}; ` +
        `types without a handler ${unhandled})`,
    );
    for (const [destination, handlers] of destinations) {
      for (const handler of handlers.values()) {
        lines.push(
          `  ${handler.event.type}${describeVersions(handler.event)} → ${handler.name}: ` +
            `${describeFailurePath(handler, capabilities)}; dead letters to ${destinationNames.deadLetter(destination, group)}`,
        );
      }
    }
  }
  if (groups.length > 0) {
    const { windowMs } = consumers.versionHold;
    lines.push(
      windowMs > 0
        ? `Messages of an event version a handler cannot take are held up to ${windowMs} ms, then dead-lettered`
        : 'Messages of an event version a handler cannot take are dead-lettered at once (versionHold.windowMs 0)',
    );
  }
  return lines;
}

/** ` v2 (from v1 through upcasters)`, ` v2`, or nothing for an unversioned event. */
function describeVersions(event: HandlerDefinition['event']): string {
  const version = versionOf(event);
  const oldest = oldestVersionOf(event);
  if (version === 1) return '';
  return oldest < version ? ` v${version} (from v${oldest} through upcasters)` : ` v${version}`;
}

/** What a (retryable) failure of this handler leads to on this transport, as the retry engine decides it. */
export function describeFailurePath(
  handler: Pick<HandlerDefinition, 'policy'>,
  capabilities: TransportCapabilities,
): string {
  const { policy } = handler;
  if (!policy) return 'no retry policy: a failure is dead-lettered at once';
  const decision = decideRetry({
    category: FailureCategory.UNKNOWN,
    attempt: 1,
    policy,
    destination: { ordered: capabilities.orderedStream },
    capabilities,
    now: () => new Date(0),
    random: () => 0,
  });
  const attempts = `up to ${policy.maxAttempts} attempts`;
  switch (decision.kind) {
    case 'PAUSE_AND_RETRY':
      return `${attempts}, pause and retry in place (later messages of the partition wait)${overridden(policy, RetryMode.PAUSE_PARTITION)}`;
    case 'RETRY_INLINE':
      return `${attempts}, retried inline`;
    case 'RETRY_DESTINATION':
      return `${attempts}, through retry destinations (${retryWord(policy)})`;
    case 'REJECT':
    case 'DEAD_LETTER':
      return policy.maxAttempts <= 1
        ? 'no retry (maxAttempts 1): a failure is dead-lettered'
        : `${attempts}, but no retry path on this transport: a failure is dead-lettered`;
  }
}

/** Why the mode the policy asked for is not the one that runs, when it is not. */
function overridden(policy: ResolvedRetryPolicy, runs: RetryMode): string {
  if (policy.mode === runs) return '';
  return (
    `: mode ${policy.mode} is not used, since ordering PRESERVE on an ordered stream pauses instead ` +
    '(rule 3); set ordering ALLOW_REORDER to let retries run out of order'
  );
}

function retryWord(policy: ResolvedRetryPolicy): string {
  return policy.mode === RetryMode.BROKER_DELAYED ? 'broker-delayed TTL queues' : 'retry topics';
}

/** The transport and where it connects, without credentials. */
function describeTransport(options: ResolvedMessagingOptions): string {
  const { transport } = options;
  if (transport.kind === 'kafka') {
    const client = transport.producerClient === 'platformatic' ? ', publishing with @platformatic/kafka' : '';
    return `Kafka (${transport.brokers.join(', ')}${transport.sasl ? `, SASL ${transport.sasl.mechanism}` : ''}${client})`;
  }
  return `RabbitMQ (${withoutCredentials(transport.url)}, ${transport.queueType} queues)`;
}

/** A URL with its user and password taken out. */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(an unparsable URL)';
  }
}
