import { Injectable, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Column, DataSource, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { z } from 'zod';
import {
  defineEvent,
  EventDefinition,
  IdempotentHandler,
  MessageContext,
  MessagingModule,
  MessagingModuleOptions,
  MessagingTenants,
  Outbox,
  OutboxService,
  TransportOptions,
} from 'nest-reliable-messaging';
import { LOCAL_KEY_SECRET } from '../../../tools/infra/local-secrets';
import { FaultProxy } from '../../harness/fault-proxy';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { RabbitFixture } from '../../harness/rabbitmq';
import { TestDatabase } from '../../harness/test-database';
import { closeFailedApp } from '../support/close-failed-app';
import { kafkaTransport, rabbitTransport, testConnectionOptions } from '../support/messaging-app';

/** The brokers the tenants suites run on, for `describe.each`: `[label, kind]`. */
export const TENANT_BROKERS: ReadonlyArray<readonly [string, 'rabbitmq' | 'kafka']> = [
  ['RabbitMQ', 'rabbitmq'],
  ['Kafka', 'kafka'],
];

/**
 * A tenants suite's broker: its transport options, and a destination and consumer group of the suite's own
 * whose exchange and queues (RabbitMQ) or topics (Kafka) `cleanup()` removes.
 */
export class TenantsBroker {
  private readonly rabbit = new RabbitFixture();
  private readonly topics = new KafkaTopics();

  constructor(readonly kind: 'rabbitmq' | 'kafka') {}

  transport(): TransportOptions {
    return this.kind === 'rabbitmq' ? rabbitTransport() : kafkaTransport();
  }

  /** A new destination named after `prefix` and a group consuming it, tracked for `cleanup()`. */
  destination(prefix: string): { destination: string; group: string } {
    const destination = uniqueName(prefix);
    const group = uniqueName('g');
    if (this.kind === 'rabbitmq') {
      this.rabbit.track({
        exchanges: [destination],
        queues: [`${destination}.${group}`, `${destination}.${group}.dlq`],
      });
    } else {
      this.topics.track(destination, `${destination}.${group}.dlq`);
    }
    return { destination, group };
  }

  cleanup(): Promise<void> {
    return this.kind === 'rabbitmq' ? this.rabbit.cleanup() : this.topics.cleanup();
  }
}

/** Closes what a tenants suite opened: its app, its fault proxy, the tenants' DataSources, its databases, its broker's. */
export async function closeTenantsSuite(parts: {
  readonly app?: TestingModule;
  readonly proxy?: FaultProxy;
  readonly dataSources: readonly DataSource[];
  readonly databases: readonly TestDatabase[];
  readonly broker: TenantsBroker;
}): Promise<void> {
  await parts.app?.close();
  await parts.proxy?.close();
  await Promise.all(parts.dataSources.map((ds) => ds.destroy().catch(() => undefined)));
  await Promise.all(parts.databases.map((database) => database.drop()));
  await parts.broker.cleanup();
}

/** The tenant-signing secret of these suites (base64 of 32 bytes; a test value, never a deployment's). */
export const TENANT_SECRET = Buffer.alloc(32, 7).toString('base64');

/** What a tenant's service writes beside its message, in the tenant's database. */
@Entity({ name: 'tenant_notes' })
export class Note {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 200 })
  text!: string;
}

/** What the consumer applied, in the tenant's database (the one the handler's transaction is in). */
@Entity({ name: 'tenant_applied' })
export class Applied {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  messageId!: string;

  @Column({ type: 'varchar', length: 200 })
  text!: string;

  /** The tenant the handler's context named. */
  @Column({ type: 'varchar', length: 63 })
  tenant!: string;
}

export const noteSchema = z.object({ text: z.string(), tenant: z.string() });
export type NoteWritten = EventDefinition<'NoteWritten', z.output<typeof noteSchema>>;

export function noteWritten(destination: string): NoteWritten {
  return defineEvent({ type: 'NoteWritten', destination, schema: noteSchema, key: (note) => note.text });
}

/** What the notes service offers the tests. */
export interface Notes {
  /** Writes a note and its message (`@Outbox()`), in the current tenant. */
  write(text: string): Promise<string>;
  /** `OutboxService.add()` outside a transaction. */
  addOnly(text: string): Promise<string>;
}

/** Writes a note and its message in the current tenant's database (`@Outbox()`). */
export function notesService(event: NoteWritten): Type<Notes> {
  @Injectable()
  class NotesService {
    constructor(
      private readonly outbox: OutboxService,
      private readonly tenants: MessagingTenants,
    ) {}

    @Outbox()
    async write(text: string): Promise<string> {
      // The tenant's DataSource: its repositories join this transaction (the tenant's own).
      await this.tenants.dataSource().getRepository(Note).save({ text });
      return this.outbox.add(event, { text, tenant: this.tenants.current() ?? '' });
    }

    /** Not decorated: `OutboxService.add()` outside a transaction. */
    async addOnly(text: string): Promise<string> {
      return this.outbox.add(event, { text, tenant: this.tenants.current() ?? '' });
    }
  }
  return NotesService;
}

/**
 * Called with each note the consumer applied, as its handler returns (before the transaction commits; the
 * handler waits for what one returns): the fault run's latency (commit of the write → the handler applied it)
 * and its handlers held across the cut. Empty in the other suites.
 */
export const appliedObservers = new Set<
  (messageId: string, tenant: string | undefined) => void | Promise<void>
>();

/** Applies notes in the tenant's database (`context.manager`), recording the tenant the context named. */
export function notesConsumer(event: NoteWritten, group: string): Type {
  @Injectable()
  class NotesConsumer {
    constructor(private readonly outbox: OutboxService) {}

    @IdempotentHandler(event, { group })
    async onNote(note: z.output<typeof noteSchema>, context: MessageContext): Promise<void> {
      await context.manager.save(Applied, {
        messageId: context.messageId,
        text: note.text,
        tenant: context.tenant ?? '(none)',
      });
      // A note that asks for a follow-up: recorded in the outbox of the tenant being applied, in this transaction.
      if (note.text.startsWith('chain-')) {
        await this.outbox.add(event, { text: `chained-${note.text.slice(6)}`, tenant: context.tenant ?? '' });
      }
      for (const observe of appliedObservers) await observe(context.messageId, context.tenant);
    }
  }
  return NotesConsumer;
}

/**
 * A tenant's DataSource on its schema or database, migrated, with the fixture's tables: a pool of 4 unless
 * `poolSize` says otherwise, at `url` when given (a fault proxy's), named `applicationName` on PostgreSQL.
 */
export async function tenantDataSource(
  database: TestDatabase,
  override?: { url?: string; poolSize?: number; applicationName?: string },
): Promise<DataSource> {
  const options = testConnectionOptions(database, override?.poolSize ?? 4, true);
  const dataSource = new DataSource({
    ...options,
    ...(override?.url ? { url: override.url } : {}),
    ...(override?.applicationName && options.type === 'postgres'
      ? { applicationName: override.applicationName }
      : {}),
    entities: [Note, Applied],
    synchronize: true,
    migrationsRun: true,
    logging: false,
  });
  await dataSource.initialize();
  return dataSource;
}

export interface TenantsAppOptions {
  /** The service's own schema (its default DataSource). */
  readonly home: TestDatabase;
  readonly transport: TransportOptions;
  readonly event: NoteWritten;
  readonly group?: string;
  readonly versionHoldWindowMs?: number;
  /** `retryDefaults` of the module (none by default: a handler's failure is dead-lettered). */
  readonly retryDefaults?: MessagingModuleOptions['retryDefaults'];
  /** The relay (`poll` by default); `logical` reads each tenant's slot. */
  readonly relayMode?: 'poll' | 'logical';
  /** False: an instance that only writes (no relay runs in it). */
  readonly relayEnabled?: boolean;
  /** RabbitMQ's `transport.prefetch` (the library's default when unset); Kafka has no such option: ignored there. */
  readonly prefetch?: number;
  /** `tenants.parkAfterMs`: how long a tenant's database may not answer before its deliveries are parked. */
  readonly parkAfterMs?: number;
}

/** An app with tenants on: the notes service, and (with `group`) the notes consumer. */
export async function createTenantsApp(
  options: TenantsAppOptions,
): Promise<{ moduleRef: TestingModule; notes: Notes }> {
  const service = notesService(options.event);
  const providers: Type[] = [service];
  if (options.group) providers.push(notesConsumer(options.event, options.group));
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({
        ...testConnectionOptions(options.home, 4, true),
        migrationsRun: true,
        logging: false,
      }),
      MessagingModule.forRoot({
        serviceName: 'tenants-test',
        topology: 'declare',
        deadLetter: { keySecret: LOCAL_KEY_SECRET },
        transport:
          options.prefetch !== undefined && options.transport.kind === 'rabbitmq'
            ? { ...options.transport, prefetch: options.prefetch }
            : options.transport,
        relay: {
          mode: options.relayMode ?? 'poll',
          enabled: options.relayEnabled ?? true,
          pollIntervalMs: 500,
          retryMaxDelayMs: 500,
        },
        consumers: {
          versionHold: {
            windowMs: options.versionHoldWindowMs ?? 60_000,
            initialDelayMs: 200,
            maxDelayMs: 500,
          },
        },
        tenants: {
          signingSecret: TENANT_SECRET,
          ...(options.parkAfterMs !== undefined ? { parkAfterMs: options.parkAfterMs } : {}),
        },
        ...(options.retryDefaults ? { retryDefaults: options.retryDefaults } : {}),
      }),
    ],
    providers,
  }).compile();
  try {
    await moduleRef.init();
  } catch (error) {
    await closeFailedApp(moduleRef);
    throw error;
  }
  return { moduleRef, notes: moduleRef.get(service) };
}
