import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ExternalContextCreator } from '@nestjs/core';
import type { ParamsFactory } from '@nestjs/core/helpers/external-context-creator';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { DecoratedMethods } from '../common/decorated-methods';
import { ConsumerMetadataAccessor } from './consumer-metadata.accessor';
import { MessagingConfigurationError } from '../errors/messaging-configuration.error';
import { MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from '../messaging.constants';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';
import { unsupportedPolicyReason } from '../retry/policy-support';
import { resolveRetryPolicy } from '../retry/retry-policy';
import { MessageTransport } from '../transports/message-transport.interface';
import { HandlerRegistry } from './handler-registry';
import { IdempotentHandlerMetadata } from './idempotent-handler.decorator';
import { MessageContext } from './message-context';
import { RPC_ARGS_METADATA, rpcParamsFactory } from './nestjs-rpc-params.patch';

const GROUP_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;
/** Group names that would make a work queue look like a dead-letter or retry destination. */
const AMBIGUOUS_GROUP = /(^|\.)(dlq|retry\.\d+ms)$/;

/**
 * Discovers `@IdempotentHandler()` methods on every provider and controller at startup and checks them:
 * a bad group name, two handlers for one event in one group, or a retry policy the transport cannot honour
 * stops the application, naming the class and method.
 */
@Injectable()
export class ConsumerExplorer implements OnModuleInit {
  constructor(
    private readonly methods: DecoratedMethods,
    private readonly metadata: ConsumerMetadataAccessor,
    private readonly contextCreator: ExternalContextCreator,
    private readonly registry: HandlerRegistry,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
  ) {}

  /** Resolves `@Payload()` and `@Ctx()` with Nest's own factory when `@nestjs/microservices` is there. */
  private readonly paramsFactory: ParamsFactory = rpcParamsFactory();

  onModuleInit(): void {
    this.checkRetryDefaults();
    for (const { wrapper, instance, name, method } of this.methods.all()) {
      const metadata = this.metadata.idempotentHandler(method);
      if (metadata) this.register(wrapper, instance, name, metadata);
    }
    if (this.registry.size > 0 && !this.options.deadLetter.keySecret) {
      throw new MessagingConfigurationError(
        'MessagingModule options',
        'deadLetter.keySecret is required when the application has consumers: a dead-letter copy keeps ' +
          'a keyed pseudonym of the message key and the key sealed under it. Generate one with ' +
          '`openssl rand -base64 32`, give it to every service and to the redrive CLI ' +
          '(MESSAGING_KEY_SECRET), from the environment or a secret store.',
      );
    }
  }

  /**
   * Every `retryDefaults` entry must be one the transport can honour, also where no handler uses it (a
   * default covers any handler of the destination without a policy of its own, now or later).
   */
  private checkRetryDefaults(): void {
    for (const [destination, policy] of this.options.retryDefaults) {
      const unsupported = unsupportedPolicyReason(policy, this.transport.capabilities);
      if (unsupported) {
        throw new MessagingConfigurationError(
          `retryDefaults['${destination}']`,
          `${unsupported} (transport: ${this.transport.kind}).`,
        );
      }
    }
  }

  private register(
    wrapper: InstanceWrapper,
    instance: Record<string, (...args: unknown[]) => unknown>,
    method: string,
    metadata: IdempotentHandlerMetadata,
  ): void {
    const name = `${instance.constructor.name}.${method}`;
    const where = `@IdempotentHandler(${metadata.event.type}) on ${name}`;
    if (!wrapper.isDependencyTreeStatic()) {
      throw new MessagingConfigurationError(
        where,
        'the provider is request-scoped; handlers must be singletons.',
      );
    }
    if (!GROUP_PATTERN.test(metadata.group) || AMBIGUOUS_GROUP.test(metadata.group)) {
      throw new MessagingConfigurationError(
        where,
        `group '${metadata.group}' must be 1-100 letters, digits, ".", "_" or "-", and must not end ` +
          'in ".dlq" or ".retry.<n>ms" (names of dead-letter and retry destinations).',
      );
    }
    const declared = this.metadata.retryPolicy(instance[method]);
    // Without a policy of its own, the destination's default (checked already in onModuleInit).
    let policy = this.options.retryDefaults.get(metadata.event.destination);
    if (declared) {
      try {
        policy = resolveRetryPolicy(declared);
      } catch (error) {
        throw new MessagingConfigurationError(`@RetryPolicy on ${name}`, (error as Error).message);
      }
    }
    const unsupported = declared && policy && unsupportedPolicyReason(policy, this.transport.capabilities);
    if (unsupported) {
      throw new MessagingConfigurationError(
        `@RetryPolicy on ${name}`,
        `${unsupported} (transport: ${this.transport.kind}).`,
      );
    }

    const call = this.contextCreator.create(
      instance,
      instance[method],
      method,
      RPC_ARGS_METADATA, // what @Payload() and @Ctx() write
      this.paramsFactory,
      undefined,
      undefined,
      // Exception filters off: the pipeline needs the handler's error itself to classify it and decide.
      { guards: true, interceptors: true, filters: false },
      'rpc',
    ) as (payload: unknown, context: MessageContext) => Promise<unknown>;
    const existing = this.registry.add({
      group: metadata.group,
      event: metadata.event,
      policy,
      name,
      invoke: async (payload, context) => call(payload, context),
    });
    if (existing) {
      throw new MessagingConfigurationError(
        where,
        `group '${metadata.group}' already handles ${metadata.event.type} in ${existing.name}; one handler per event and group.`,
      );
    }
  }
}
