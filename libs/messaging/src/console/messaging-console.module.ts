import { Module } from '@nestjs/common';
import { RouterModule } from '@nestjs/core';
import { ConsoleGate } from './console-gate';
import { ConsoleLetters } from './console-letters';
import { ConsoleRedrive } from './console-redrive';
import { ConsoleController } from './console.controller';
import { ConsoleFilesController } from './console-files.controller';
import { ConsoleIncidentController } from './console-incident.controller';
import { basePath, MESSAGING_CONSOLE_BASE } from './console.tokens';
import {
  ConfigurableMessagingConsoleModule,
  MessagingConsoleAsyncOptions,
  MessagingConsoleRootOptions,
} from './messaging-console.module-definition';

/**
 * The operations console: server-rendered pages for outbox backlog, consumer figures, dead letters, a
 * four-eyes redrive (plan → approve → execute) and the audit log, mounted at `path` (default `console`).
 * Opt-in and meant for an admin app of its own (it holds the admin broker credential in its
 * `RedriveService`), never a service's runtime. Needs `@nestjs/platform-express`.
 *
 * @example
 * ```ts
 * MessagingConsoleModule.forRootAsync({
 *   path: 'console',
 *   useFactory: () => ({ redrive, ledger, authenticator, approverSigners, deadLetterQueues: ['orders.billing.dlq'] }),
 * });
 * ```
 */
@Module({})
export class MessagingConsoleModule extends ConfigurableMessagingConsoleModule {
  /** The console with options given now. */
  static override forRoot(options: MessagingConsoleRootOptions) {
    return withRoutes(super.forRoot(options), options.path);
  }

  /** The console with options a factory (or class) makes. */
  static override forRootAsync(options: MessagingConsoleAsyncOptions) {
    return withRoutes(super.forRootAsync(options), options.path);
  }
}

function withRoutes<T extends ReturnType<typeof ConfigurableMessagingConsoleModule.forRoot>>(
  definition: T,
  path = 'console',
): T {
  const base = basePath(path);
  return {
    ...definition,
    imports: [
      ...(definition.imports ?? []),
      RouterModule.register([{ path: base, module: MessagingConsoleModule }]),
    ],
    controllers: [ConsoleController, ConsoleFilesController, ConsoleIncidentController],
    providers: [
      ...(definition.providers ?? []),
      { provide: MESSAGING_CONSOLE_BASE, useValue: base },
      ConsoleGate,
      ConsoleLetters,
      ConsoleRedrive,
    ],
  };
}
