import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { installedVersion, peerVersionWarnings } from './common/peer-versions';
import { InvalidMessagingOptionsError } from './errors/invalid-messaging-options.error';
import { MessagingSchemaMissingError } from './errors/messaging-schema-missing.error';
import { MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from './messaging.constants';
import { ResolvedMessagingOptions } from './options/resolve-messaging-options';
import { InboxStore } from './inbox/inbox-store';
import { ParkedStore } from './inbox/parked-store';
import { OutboxStore } from './outbox/outbox-store';
import { MessageTransport } from './transports/message-transport.interface';

/**
 * Startup and shutdown of what the library owns: at init, warns about peers of another Nest major, checks the
 * database (its version, that the migrations ran, that it can do what the options ask); at shutdown, after relays and consumers have stopped
 * (they stop in `beforeApplicationShutdown`), closes the broker connections.
 */
@Injectable()
export class MessagingLifecycle implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Messaging');

  constructor(
    private readonly store: OutboxStore,
    private readonly inbox: InboxStore,
    private readonly parked: ParkedStore,
    @Inject(MESSAGING_TRANSPORT) private readonly transport: MessageTransport,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    peerVersionWarnings(installedVersion).forEach((warning) => this.logger.warn(warning));
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
    await checkMessagingSchema(this.store, this.inbox);
    // With tenants on, a consumer parks a tenant's deliveries there while the tenant's database is away.
    if (this.options.tenants && !(await this.parked.tableExists())) {
      const { name, list } = this.parked.migration;
      throw new MessagingSchemaMissingError(this.parked.tables.parked, name, list);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.transport.close();
  }
}

/**
 * Throws when the database cannot run the library's SQL or its migrations did not run: an
 * `UnsupportedDatabaseError`, or a `MessagingSchemaMissingError` naming the table and the migration.
 */
export async function checkMessagingSchema(store: OutboxStore, inbox: InboxStore): Promise<void> {
  await store.checkServer();
  if (!(await store.tableExists())) {
    const { name, list } = store.migration;
    throw new MessagingSchemaMissingError(store.tables.outbox, name, list);
  }
  if (!(await store.scheduledTableExists())) {
    const { name, list } = store.scheduledMigration;
    throw new MessagingSchemaMissingError(store.tables.scheduled, name, list);
  }
  if (!(await inbox.attemptsTableExists())) {
    const { name, list } = inbox.attemptsMigration;
    throw new MessagingSchemaMissingError(inbox.tables.attempts, name, list);
  }
}
