import { Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { MessagingMigrations, MessagingTenants, MysqlMessagingMigrations } from 'nest-reliable-messaging';
import { DataSource } from 'typeorm';
import { Invoice } from './invoice.entity.js';

/** One tenant as configuration names it: a PostgreSQL schema, or a database of its own. */
interface TenantConfig {
  readonly name: string;
  readonly type: 'postgres' | 'mariadb';
  readonly url: string;
  /** PostgreSQL: the tenant's schema on a shared server (schema per tenant). */
  readonly schema?: string;
}

/** Opens each tenant's DataSource at startup (from TENANTS, a JSON list) and registers it; adds more later. */
@Injectable()
export class TenantDatabases implements OnModuleInit, OnApplicationShutdown {
  private readonly opened = new Map<string, DataSource>();

  constructor(private readonly tenants: MessagingTenants) {}

  async onModuleInit(): Promise<void> {
    const configured = JSON.parse(process.env.TENANTS ?? '[]') as TenantConfig[];
    for (const tenant of configured) await this.add(tenant);
  }

  /** A customer signs up: its database is migrated, registered, and its relay starts. */
  async add(config: TenantConfig): Promise<void> {
    const dataSource = new DataSource({
      type: config.type,
      url: config.url,
      ...(config.type === 'postgres' ? { schema: config.schema } : {}),
      entities: [Invoice],
      migrations: config.type === 'postgres' ? MessagingMigrations : MysqlMessagingMigrations,
      migrationsRun: true,
    });
    await dataSource.initialize();
    await this.tenants.add(config.name, dataSource);
    this.opened.set(config.name, dataSource);
  }

  /** A customer leaves: its relay stops; what it has not published yet stays in its database. */
  async remove(name: string): Promise<void> {
    const { pendingMessages, scheduledMessages } = await this.tenants.remove(name);
    if ((pendingMessages ?? 1) + (scheduledMessages ?? 1) === 0) await this.opened.get(name)?.destroy();
    this.opened.delete(name);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.opened.values()].map((dataSource) => dataSource.destroy()));
  }
}
