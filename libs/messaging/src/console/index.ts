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
