export type {
  ConsoleAuthenticator,
  ConsoleMetricsSource,
  ConsoleRole,
  ConsoleUser,
  MessagingConsoleExtras,
  MessagingConsoleOptions,
} from './console-options.interface';
export type { SignInLimits } from './sign-in-guard';
export type {
  MessagingConsoleAsyncOptions,
  MessagingConsoleRootOptions,
} from './messaging-console.module-definition';
export { MessagingConsoleModule } from './messaging-console.module';
export { ConfigurableMessagingConsoleModule } from './messaging-console.module-definition';
export type { ConsolePlan, ConsolePlanRefusal } from './plans/console-plan';
export type { ConsolePlanStore } from './plans/console-plan-store.interface';
export { MemoryConsolePlanStore } from './plans/memory-console-plan-store';
export { PostgresConsolePlanStore } from './plans/postgres-console-plan-store';
