import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MessagingModule } from 'nest-reliable-messaging';
import { OperationsModule, serviceTypeOrmOptions } from '@app/service-kit';
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
        TypeOrmModule.forRoot(serviceTypeOrmOptions(config.database, [Post], PostServiceMigrations)),
        MessagingModule.forRoot({
          serviceName: config.serviceName,
          transport: config.transport,
          relay: {
            ...(config.relayLeaseMs ? { leaseMs: config.relayLeaseMs } : {}),
            ...(config.relayMode ? { mode: config.relayMode } : {}),
          },
          topology: config.topology,
        }),
        PostsModule,
        OperationsModule,
      ],
    };
  }
}
