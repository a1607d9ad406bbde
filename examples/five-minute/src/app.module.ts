import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MessagingMigrations, MessagingModule } from 'nest-reliable-messaging';
import { BillingHandler } from './shop/billing.handler.js';
import { Invoice } from './shop/invoice.entity.js';
import { Order } from './shop/order.entity.js';
import { OrdersController } from './shop/orders.controller.js';
import { OrdersService } from './shop/orders.service.js';
import { ReceiptSender } from './shop/receipt-sender.js';
import { ReminderHandler } from './shop/reminder.handler.js';

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/shop',
      autoLoadEntities: true,
      synchronize: true, // your own tables, for the example; use migrations in production
      migrations: [...MessagingMigrations], // the library's tables: messaging_outbox, messaging_inbox, ...
      migrationsRun: true,
    }),
    TypeOrmModule.forFeature([Order, Invoice]),
    MessagingModule.forRoot({
      serviceName: 'shop',
      transport: process.env.AMQP_URL
        ? { kind: 'rabbitmq', url: process.env.AMQP_URL }
        : { kind: 'kafka', brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',') },
      // Dead-letter copies key with it (openssl rand -base64 32; the same for every service and the CLI).
      deadLetter: { keySecret: process.env.MESSAGING_KEY_SECRET },
      // The topology (destination, DLQ...) comes from an admin: npx nest-messaging topology apply --file topology.json
    }),
  ],
  controllers: [OrdersController],
  providers: [OrdersService, BillingHandler, ReminderHandler, ReceiptSender],
})
export class AppModule {}
