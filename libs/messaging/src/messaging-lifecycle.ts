import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { MessagingSchemaMissingError } from './errors/messaging-schema-missing.error';
import { MESSAGING_TRANSPORT } from './messaging.constants';
import { CreateMessagingTables1764547200000 } from './migrations/create-messaging-tables.migration';
import { OutboxStore } from './outbox/outbox-store';
import { MessageTransport } from './transports/message-transport.interface';

/**
 * Startup and shutdown of what the library owns: at init, checks that the migration ran; at shutdown,
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
    if (!(await this.store.tableExists())) {
      throw new MessagingSchemaMissingError(
        this.store.tables.outbox,
        CreateMessagingTables1764547200000.name,
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.transport.close();
  }
}
