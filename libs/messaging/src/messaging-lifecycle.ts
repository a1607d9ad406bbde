import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InvalidMessagingOptionsError } from './errors/invalid-messaging-options.error';
import { MessagingSchemaMissingError } from './errors/messaging-schema-missing.error';
import { MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from './messaging.constants';
import { ResolvedMessagingOptions } from './options/resolve-messaging-options';
import { OutboxStore } from './outbox/outbox-store';
import { MessageTransport } from './transports/message-transport.interface';

/**
 * Startup and shutdown of what the library owns: at init, checks the database (its version, that the
 * migration ran, that it can do what the options ask); at shutdown, after relays and consumers have stopped
 * (they stop in `beforeApplicationShutdown`), closes the broker connections.
 */
@Injectable()
export class MessagingLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly store: OutboxStore,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.options.relay.notify && this.store.notifyChannel === undefined) {
      throw new InvalidMessagingOptionsError([
        {
          path: 'relay.notify',
          message:
            'needs PostgreSQL (LISTEN/NOTIFY); this database has no equivalent. Leave it off: the relay ' +
            'wakes after commits in its own process and polls every relay.pollIntervalMs for the others.',
        },
      ]);
    }
    await this.store.checkServer();
    if (!(await this.store.tableExists())) {
      const { name, list } = this.store.migration;
      throw new MessagingSchemaMissingError(this.store.tables.outbox, name, list);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.transport.close();
  }
}
