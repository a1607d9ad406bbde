import { DynamicModule, Module } from '@nestjs/common';
import { MessagingConsoleModule } from 'nest-reliable-messaging/console';
import { AdminConnections } from './admin-connections';
import { EnvironmentAuthenticator } from './auth/environment-authenticator';
import { OpsConsoleConfig } from './config/console.config';
import { HealthController } from './health.controller';

const CONFIG = Symbol('OPS_CONSOLE_CONFIG');

@Module({})
class AdminModule {
  static forRoot(config: OpsConsoleConfig): DynamicModule {
    return {
      module: AdminModule,
      providers: [
        { provide: CONFIG, useValue: config },
        { provide: AdminConnections, useFactory: () => AdminConnections.open(config) },
      ],
      exports: [AdminConnections, CONFIG],
    };
  }
}

/** The ops console: `MessagingConsoleModule` with the admin connections and the environment's users. */
@Module({})
export class AppModule {
  static forRoot(config: OpsConsoleConfig): DynamicModule {
    const admin = AdminModule.forRoot(config);
    return {
      module: AppModule,
      controllers: [HealthController],
      imports: [
        admin,
        MessagingConsoleModule.forRootAsync({
          path: config.path,
          imports: [admin],
          inject: [AdminConnections, CONFIG],
          useFactory: (connections: AdminConnections, c: OpsConsoleConfig) => ({
            redrive: connections.redrive,
            ledger: connections.ledger,
            authenticator: new EnvironmentAuthenticator(c.users),
            approverSigners: c.approverSigners,
            deadLetterQueues: c.deadLetterQueues,
            metricsSources: c.metricsSources,
            planStore: connections.plans,
            sessionIdleMs: c.sessionIdleMs,
            sessionTtlMs: c.sessionTtlMs,
            pageRefreshSeconds: c.pageRefreshSeconds,
            secureCookies: c.secureCookies,
            allowRewritableAudit: c.allowRewritableAudit,
          }),
        }),
      ],
    };
  }
}
