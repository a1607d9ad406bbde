import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MessagingMigrations, MessagingModule } from 'nest-reliable-messaging';
import { InvoicesService, InvoiceMailer } from './invoices.service.js';
import { TenantDatabases } from './tenant-databases.js';
import { TenantMiddleware } from './tenant.middleware.js';

@Module({
  imports: [
    // The service's own database: the library needs one, and tenants' writes never go there.
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      migrations: MessagingMigrations,
      migrationsRun: true,
    }),
    MessagingModule.forRoot({
      serviceName: 'billing-service',
      transport: { kind: 'kafka', brokers: ['127.0.0.1:9092'] },
      deadLetter: { keySecret: process.env.MESSAGING_KEY_SECRET },
      // On: every write and every message belongs to a tenant, signed with this secret (shared with the
      // services that consume these messages; openssl rand -base64 32).
      tenants: { signingSecret: process.env.MESSAGING_TENANT_SECRET ?? '' },
    }),
  ],
  providers: [TenantDatabases, InvoicesService, InvoiceMailer],
})
export class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(TenantMiddleware).forRoutes('*path');
  }
}
