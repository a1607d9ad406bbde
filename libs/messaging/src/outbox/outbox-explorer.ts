import { Injectable, OnModuleInit, Optional } from '@nestjs/common';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { DecoratedMethods } from '../common/decorated-methods';
import { OutboxMetadataAccessor } from './outbox-metadata.accessor';
import { MessagingConfigurationError } from '../errors/messaging-configuration.error';
import { TransactionHost } from '../transaction/transaction-host';
import { OutboxOptions } from './outbox.decorator';
import { TenantRouting } from '../transaction/tenant-routing';

const WRAPPED = Symbol('outbox-wrapped');

type Method = ((...args: unknown[]) => unknown) & { [WRAPPED]?: true };

/** Finds `@Outbox()` methods at startup and runs each call of them in a transaction. */
@Injectable()
export class OutboxExplorer implements OnModuleInit {
  constructor(
    private readonly methods: DecoratedMethods,
    private readonly metadata: OutboxMetadataAccessor,
    private readonly transactions: TransactionHost,
    @Optional() private readonly tenants?: TenantRouting,
  ) {}

  onModuleInit(): void {
    for (const { wrapper, instance, name, method } of this.methods.all()) {
      const options = this.metadata.outbox(method);
      if (options) this.wrap(wrapper, instance, name, options);
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
    const { transactions, tenants } = this;
    const operation = `@Outbox() ${wrapper.name}.${name}`;
    // With tenants on: the current tenant's transaction, in its database (none: TenantRequiredError).
    const wrapped: Method = async function (this: unknown, ...args: unknown[]) {
      const host = tenants?.enabled ? tenants.transactions(operation) : transactions;
      return host.run(async () => original.apply(this, args), options);
    };
    for (const key of Reflect.getMetadataKeys(original)) {
      Reflect.defineMetadata(key, Reflect.getMetadata(key, original), wrapped);
    }
    Object.defineProperty(wrapped, 'name', { value: original.name });
    wrapped[WRAPPED] = true;
    instance[name] = wrapped;
  }
}
