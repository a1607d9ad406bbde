import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { MessagingConfigurationError } from '../errors/messaging-configuration.error';
import { OUTBOX_METADATA } from '../messaging.constants';
import { TransactionHost } from '../transaction/transaction-host';
import { OutboxOptions } from './outbox.decorator';

const WRAPPED = Symbol('outbox-wrapped');

type Method = ((...args: unknown[]) => unknown) & { [WRAPPED]?: true };

/** Finds `@Outbox()` methods at startup and runs each call of them in a transaction. */
@Injectable()
export class OutboxExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly transactions: TransactionHost,
  ) {}

  onModuleInit(): void {
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as Record<string, Method> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, Method>;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const options = this.reflector.get<OutboxOptions | undefined>(OUTBOX_METADATA, prototype[name]);
        if (options) this.wrap(wrapper, instance, name, options);
      }
    }
  }

  private wrap(
    wrapper: InstanceWrapper,
    instance: Record<string, Method>,
    name: string,
    options: OutboxOptions,
  ): void {
    const original = instance[name];
    if (original[WRAPPED]) return;
    if (!wrapper.isDependencyTreeStatic()) {
      throw new MessagingConfigurationError(
        `@Outbox() on ${wrapper.name}.${name}`,
        'the provider is request-scoped; move the method to a singleton provider.',
      );
    }
    const transactions = this.transactions;
    const wrapped: Method = function (this: unknown, ...args: unknown[]) {
      return transactions.run(async () => original.apply(this, args), options);
    };
    for (const key of Reflect.getMetadataKeys(original)) {
      Reflect.defineMetadata(key, Reflect.getMetadata(key, original), wrapped);
    }
    Object.defineProperty(wrapped, 'name', { value: original.name });
    wrapped[WRAPPED] = true;
    instance[name] = wrapped;
  }
}
