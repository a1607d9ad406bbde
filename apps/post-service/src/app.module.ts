import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MessagingMigrations, MessagingModule } from '@app/messaging';
import { OperationsModule, PERMANENT_DATABASE_ERRORS } from '@app/service-kit';
import { PostServiceConfig } from './config/app.config';
import { PostServiceMigrations } from './migrations';
import { Post } from './posts/post.entity';
import { PostsModule } from './posts/posts.module';

@Module({})
export class AppModule {
  /** The application, wired from its validated configuration (see `config/app.config.ts`). */
  static forRoot(config: PostServiceConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: config.database.url,
          schema: config.database.schema,
          entities: [Post],
          // The app's tables and the library's outbox and inbox, created by migrations (never synchronize).
          migrations: [...MessagingMigrations, ...PostServiceMigrations],
          migrationsRun: true,
          synchronize: false,
          retryAttempts: 5,
          retryDelay: 2_000,
          // A missing database or schema does not appear by waiting.
          toRetry: (error: unknown) =>
            !PERMANENT_DATABASE_ERRORS.includes((error as { code?: string }).code ?? ''),
        }),
        MessagingModule.forRoot({
          serviceName: config.serviceName,
          transport: config.transport,
          relay: config.relayLeaseMs ? { leaseMs: config.relayLeaseMs } : {},
        }),
        PostsModule,
        OperationsModule,
      ],
    };
  }
}
