import { DynamicModule, Module, OnApplicationShutdown } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import {
  ConsoleAuthenticator,
  MessagingConsoleModule,
  PostgresConsolePlanStore,
} from 'nest-reliable-messaging/console';
import {
  ApproverKeyring,
  parseKeySecret,
  PostgresRedriveLedger,
  RedriveService,
} from 'nest-reliable-messaging/redrive';

/** The admin side the console works through, opened as the CLI opens it, and closed with the app. */
class AdminSide implements OnApplicationShutdown {
  private constructor(
    readonly redrive: RedriveService,
    readonly ledger: PostgresRedriveLedger,
    readonly plans: PostgresConsolePlanStore,
  ) {}

  static async open(env: NodeJS.ProcessEnv): Promise<AdminSide> {
    const database = { url: required(env, 'MESSAGING_ADMIN_DATABASE_URL') };
    const ledger = await PostgresRedriveLedger.connect(database);
    const plans = await PostgresConsolePlanStore.connect(database);
    const redrive = new RedriveService({
      broker: { kind: 'rabbitmq', url: required(env, 'MESSAGING_ADMIN_AMQP_URL') },
      credential: {
        principal: required(env, 'MESSAGING_ADMIN_PRINCIPAL'),
        secret: required(env, 'MESSAGING_ADMIN_PASSWORD'),
      },
      // The approvers' public keys (the keyring file `nest-messaging approver keygen` prints entries for).
      approvers: ApproverKeyring.parse(
        JSON.parse(readFileSync(required(env, 'MESSAGING_ADMIN_APPROVERS'), 'utf8')),
      ),
      keySecret: parseKeySecret(required(env, 'MESSAGING_KEY_SECRET'), 'MESSAGING_KEY_SECRET'),
      ledger,
    });
    return new AdminSide(redrive, ledger, plans);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redrive.close();
    await this.plans.close();
    await this.ledger.close();
  }
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

/**
 * The operations console in your own admin app: `OpsConsoleModule.forRoot({ authenticator, deadLetterQueues })`
 * in its AppModule's imports serves it at /console. `authenticator`: your identity provider behind
 * `ConsoleAuthenticator` (who may sign in, with which roles).
 */
@Module({})
export class OpsConsoleModule {
  static forRoot(options: {
    authenticator: ConsoleAuthenticator;
    deadLetterQueues: readonly string[];
  }): DynamicModule {
    const admin: DynamicModule = {
      module: class AdminSideModule {},
      providers: [{ provide: AdminSide, useFactory: () => AdminSide.open(process.env) }],
      exports: [AdminSide],
    };
    return {
      module: OpsConsoleModule,
      imports: [
        admin,
        MessagingConsoleModule.forRootAsync({
          path: '/console',
          imports: [admin],
          inject: [AdminSide],
          useFactory: (side: AdminSide) => ({
            redrive: side.redrive,
            ledger: side.ledger,
            planStore: side.plans,
            authenticator: options.authenticator,
            deadLetterQueues: options.deadLetterQueues,
          }),
        }),
      ],
    };
  }
}
