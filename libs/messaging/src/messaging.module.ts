import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { ConsumerExplorer } from './consumers/consumer-explorer';
import { ConsumerOrchestrator } from './consumers/consumer-orchestrator';
import { DeliveryPipeline } from './consumers/delivery-pipeline';
import { HandlerRegistry } from './consumers/handler-registry';
import { MessagingServer } from './consumers/messaging.server';
import { messagingDialect } from './database/messaging-dialect';
import { InboxRetention } from './inbox/inbox-retention';
import { InboxStore } from './inbox/inbox-store';
import { InboxService } from './inbox/inbox.service';
import {
  MESSAGING_DATA_SOURCE,
  MESSAGING_RESOLVED_OPTIONS,
  MESSAGING_TRANSPORT,
} from './messaging.constants';
import { ConfigurableMessagingModule, MESSAGING_MODULE_OPTIONS } from './messaging.module-definition';
import { MessagingLifecycle } from './messaging-lifecycle';
import { MessagingModuleOptions } from './messaging-options.interface';
import { MessageTracing } from './observability/message-tracing';
import { MessagingHealthIndicator } from './observability/messaging-health.indicator';
import { MessagingMetrics } from './observability/messaging-metrics';
import { MetricsCollector } from './observability/metrics-collector';
import { resolveMessagingOptions, ResolvedMessagingOptions } from './options/resolve-messaging-options';
import { OutboxExplorer } from './outbox/outbox-explorer';
import { OutboxNotifyListener } from './outbox/outbox-notify-listener';
import { OutboxRelay } from './outbox/outbox-relay';
import { OutboxRetention } from './outbox/outbox-retention';
import { OutboxStore } from './outbox/outbox-store';
import { OutboxService } from './outbox/outbox.service';
import { RelayWakeup } from './outbox/relay-wakeup';
import { TransactionHost } from './transaction/transaction-host';
import { createTransport } from './transports/create-transport';

/**
 * Reliable messaging for a Nest application: the transactional outbox and its relay, idempotent consumers,
 * retries and dead-lettering, over Kafka or RabbitMQ, in the application's TypeORM DataSource.
 *
 * ```ts
 * @Module({
 *   imports: [
 *     TypeOrmModule.forRoot({ type: 'postgres', url, migrations: [...MessagingMigrations], migrationsRun: true }),
 *     MessagingModule.forRoot({ serviceName: 'post-service', transport: { kind: 'kafka', brokers: ['127.0.0.1:9092'] } }),
 *   ],
 * })
 * export class AppModule {}
 * ```
 * Options are validated at startup; `forRootAsync({ useFactory, inject })` takes them from configuration.
 */
@Module({
  imports: [DiscoveryModule, ScheduleModule.forRoot(), TerminusModule],
  providers: [
    {
      provide: MESSAGING_RESOLVED_OPTIONS,
      useFactory: (options: MessagingModuleOptions) => resolveMessagingOptions(options),
      inject: [MESSAGING_MODULE_OPTIONS],
    },
    {
      provide: MESSAGING_TRANSPORT,
      useFactory: (options: ResolvedMessagingOptions) => createTransport(options),
      inject: [MESSAGING_RESOLVED_OPTIONS],
    },
    TransactionHost,
    // The database's SQL, chosen from the DataSource's type (an unsupported one fails the startup here).
    {
      provide: OutboxStore,
      useFactory: (dataSource: DataSource) => messagingDialect(dataSource).outboxStore(dataSource),
      inject: [MESSAGING_DATA_SOURCE],
    },
    {
      provide: InboxStore,
      useFactory: (dataSource: DataSource) => messagingDialect(dataSource).inboxStore(dataSource),
      inject: [MESSAGING_DATA_SOURCE],
    },
    OutboxService,
    RelayWakeup,
    OutboxRelay,
    OutboxExplorer,
    OutboxRetention,
    OutboxNotifyListener,
    MessagingLifecycle,
    InboxService,
    InboxRetention,
    HandlerRegistry,
    ConsumerExplorer,
    DeliveryPipeline,
    ConsumerOrchestrator,
    MessagingServer,
    MessagingMetrics,
    MetricsCollector,
    MessageTracing,
    MessagingHealthIndicator,
  ],
  exports: [
    MessagingMetrics,
    MessagingHealthIndicator,
    OutboxService,
    TransactionHost,
    OutboxRelay,
    ConsumerOrchestrator,
    MessagingServer,
    MESSAGING_TRANSPORT,
    MESSAGING_RESOLVED_OPTIONS,
  ],
})
export class MessagingModule extends ConfigurableMessagingModule {}
