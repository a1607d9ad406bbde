import { Module, Provider, Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { Clock, systemClock } from './common/clock';
import { DecoratedMethods } from './common/decorated-methods';
import { ConsumerMetadataAccessor } from './consumers/consumer-metadata.accessor';
import { OutboxMetadataAccessor } from './outbox/outbox-metadata.accessor';
import { isPeerInstalled } from './common/optional-peer';
import { ConsumerExplorer } from './consumers/consumer-explorer';
import { ConsumerOrchestrator } from './consumers/consumer-orchestrator';
import { StartupSummary } from './consumers/startup-summary';
import { DeliveryPipeline } from './consumers/delivery-pipeline';
import { TenantParking } from './consumers/tenant-parking';
import { FailureSettler } from './consumers/failure-settler';
import { HeldMessages } from './consumers/held-messages';
import { HandlerRegistry } from './consumers/handler-registry';
import type * as MessagingServerModule from './consumers/messaging.server';
import { messagingDialect } from './database/messaging-dialect';
import { InboxRetention } from './inbox/inbox-retention';
import { InboxWriters } from './inbox/inbox-writers';
import { InboxStore } from './inbox/inbox-store';
import { ParkedStore } from './inbox/parked-store';
import { InboxService } from './inbox/inbox.service';
import {
  MESSAGING_CLOCK,
  MESSAGING_DATA_SOURCE,
  MESSAGING_LOGICAL_NAMES,
  MESSAGING_RESOLVED_OPTIONS,
  MESSAGING_TRANSPORT,
} from './messaging.constants';
import { ConfigurableMessagingModule, MESSAGING_MODULE_OPTIONS } from './messaging.module-definition';
import { MessagingLifecycle } from './messaging-lifecycle';
import { MessagingModuleOptions } from './messaging-options.interface';
import { MessageTracing } from './observability/message-tracing';
import { MessagingHealthIndicator } from './observability/messaging-health.indicator';
import { MessagingMetrics } from './observability/messaging-metrics';
import { MessagingStatus } from './observability/messaging-status';
import { MetricsCollector } from './observability/metrics-collector';
import {
  HeldMessageFigures,
  OutboxFigures,
  RelaySlotFigures,
  RunningConsumers,
  TenantFigures,
} from './observability/observed-sources';
import { resolveMessagingOptions, ResolvedMessagingOptions } from './options/resolve-messaging-options';
import { postgresTables } from './tables/postgres-tables';
import { LogicalMessageWriter } from './outbox/logical/logical-message-writer';
import { logicalNames } from './outbox/logical/logical-names';
import { LogicalRelay } from './outbox/logical/logical-relay';
import { OutboxExplorer } from './outbox/outbox-explorer';
import { OutboxNotifyListener } from './outbox/outbox-notify-listener';
import { OutboxRelay } from './outbox/outbox-relay';
import { OutboxRetention } from './outbox/outbox-retention';
import { OutboxStore } from './outbox/outbox-store';
import { OutboxService } from './outbox/outbox.service';
import { RelayWakeup } from './outbox/relay-wakeup';
import { TransactionHost } from './transaction/transaction-host';
import { createTransport } from './create-transport';
import { MessagingTenants } from './tenants/messaging-tenants';
import { TenantRouting } from './transaction/tenant-routing';

const serverProviders = messagingServer();

/**
 * Owns what the library runs in an application: the broker transport, the relay, the consumers, the
 * retention jobs and their shutdown. Imported once, through `MessagingModule.forRoot()`/`forRootAsync()`;
 * global unless `isGlobal: false`.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: MESSAGING_RESOLVED_OPTIONS,
      useFactory: (options: MessagingModuleOptions) => resolveMessagingOptions(options),
      inject: [MESSAGING_MODULE_OPTIONS],
    },
    // The library's time, timers and jitter; tests replace it with `overrideProvider` (a `FakeClock`). A copy
    // of the frozen `systemClock`: an instrument (`NestFactory.create(…, { instrument })`, as `nest new` sets up
    // `@nestjs/observe`) wraps each provider in a Proxy whose `get` returns wrapped methods, and the Proxy
    // invariant forbids that for a frozen object's methods (issue 37).
    { provide: MESSAGING_CLOCK, useFactory: (): Clock => ({ ...systemClock }) },
    {
      provide: MESSAGING_TRANSPORT,
      useFactory: (options: ResolvedMessagingOptions, clock: Clock) => createTransport(options, clock),
      inject: [MESSAGING_RESOLVED_OPTIONS, MESSAGING_CLOCK],
    },
    DecoratedMethods,
    ConsumerMetadataAccessor,
    OutboxMetadataAccessor,
    TransactionHost,
    // The database's SQL, chosen from the DataSource's type (an unsupported one fails the startup here).
    {
      provide: OutboxStore,
      useFactory: (dataSource: DataSource, options: ResolvedMessagingOptions) =>
        messagingDialect(dataSource).outboxStore(dataSource, {
          keepSent: options.retention.sentRetentionMs > 0,
          sentOnInsert: options.relay.mode === 'external',
        }),
      inject: [MESSAGING_DATA_SOURCE, MESSAGING_RESOLVED_OPTIONS],
    },
    {
      provide: InboxStore,
      useFactory: (dataSource: DataSource) => messagingDialect(dataSource).inboxStore(dataSource),
      inject: [MESSAGING_DATA_SOURCE],
    },
    {
      provide: ParkedStore,
      useFactory: (dataSource: DataSource) => messagingDialect(dataSource).parkedStore(dataSource),
      inject: [MESSAGING_DATA_SOURCE],
    },
    OutboxService,
    RelayWakeup,
    OutboxRelay,
    // relay.mode 'logical': the slot's names, the writer OutboxService uses, the relay that reads the slot.
    {
      provide: MESSAGING_LOGICAL_NAMES,
      useFactory: (dataSource: DataSource, options: ResolvedMessagingOptions) =>
        logicalNames(postgresTables(dataSource).schema, options.relay.slot),
      inject: [MESSAGING_DATA_SOURCE, MESSAGING_RESOLVED_OPTIONS],
    },
    LogicalMessageWriter,
    LogicalRelay,
    OutboxExplorer,
    OutboxRetention,
    OutboxNotifyListener,
    MessagingLifecycle,
    InboxService,
    InboxRetention,
    HandlerRegistry,
    ConsumerExplorer,
    HeldMessages,
    FailureSettler,
    TenantParking,
    DeliveryPipeline,
    StartupSummary, // before the orchestrator: the summary is logged before anything subscribes
    ConsumerOrchestrator,
    MessagingMetrics,
    MetricsCollector,
    MessageTracing,
    MessagingHealthIndicator,
    MessagingStatus,
    // What observability and inbox retention read, narrowed to contracts of their own (they stand lower).
    { provide: OutboxFigures, useExisting: OutboxStore },
    { provide: RelaySlotFigures, useExisting: LogicalRelay },
    { provide: RunningConsumers, useExisting: ConsumerOrchestrator },
    { provide: HeldMessageFigures, useExisting: HeldMessages },
    { provide: InboxWriters, useExisting: HandlerRegistry },
    // Tenants (the `tenants` option): the registry, and what the outbox and the consumers see of it.
    MessagingTenants,
    { provide: TenantRouting, useExisting: MessagingTenants },
    { provide: TenantFigures, useExisting: MessagingTenants },
    ...serverProviders,
  ],
  exports: [
    MessagingTenants,
    MessagingMetrics,
    MessagingHealthIndicator,
    MessagingStatus,
    OutboxService,
    TransactionHost,
    OutboxRelay,
    LogicalRelay,
    ConsumerOrchestrator,
    ...serverProviders,
    MESSAGING_TRANSPORT,
    MESSAGING_RESOLVED_OPTIONS,
  ],
})
export class MessagingCoreModule extends ConfigurableMessagingModule {}

/** `MessagingServer` is provided when `@nestjs/microservices` (an optional peer) is installed. */
function messagingServer(): Provider[] {
  if (!isPeerInstalled('@nestjs/microservices')) return [];
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loads @nestjs/microservices
  const { MessagingServer } = require('./consumers/messaging.server') as typeof MessagingServerModule;
  return [MessagingServer as Type];
}
