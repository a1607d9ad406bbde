import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { MessagingSchemaMissingError } from './errors/messaging-schema-missing.error';
import { MESSAGING_TRANSPORT } from './messaging.constants';
import { CreateMessagingAttempts1764720000000 } from './migrations/create-attempts-table.migration';
import { CreateMessagingTables1764547200000 } from './migrations/create-messaging-tables.migration';
import { OutboxStore } from './outbox/outbox-store';
import { MessageTransport } from './transports/message-transport.interface';

/**
 * Startup and shutdown of what the library owns: at init, checks that the migrations ran; at shutdown,
 * after relays and consumers have stopped (they stop in `beforeApplicationShutdown`), closes the broker
 * connections.
 */
@Injectable()
export class MessagingLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly store: OutboxStore,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
  ) {}

  async onModuleInit(): Promise<void> {
    const { outbox, attempts } = this.store.tables;
    if (!(await this.store.tableExists(outbox))) {
      throw new MessagingSchemaMissingError(outbox, CreateMessagingTables1764547200000.name);
    }
    if (!(await this.store.tableExists(attempts))) {
      throw new MessagingSchemaMissingError(attempts, CreateMessagingAttempts1764720000000.name);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.transport.close();
  }
}
