import { ConfigurableModuleAsyncOptions, ConfigurableModuleBuilder } from '@nestjs/common';
import { MessagingConsoleExtras, MessagingConsoleOptions } from './console-options.interface';

export const {
  ConfigurableModuleClass: ConfigurableMessagingConsoleModule,
  MODULE_OPTIONS_TOKEN: MESSAGING_CONSOLE_OPTIONS,
} = new ConfigurableModuleBuilder<MessagingConsoleOptions>({ moduleName: 'MessagingConsole' })
  .setClassMethodName('forRoot')
  .setExtras<MessagingConsoleExtras>({ path: 'console' }, (definition) => definition)
  .build();

/** What `MessagingConsoleModule.forRoot()` takes: the options, plus the path it is mounted at. */
export type MessagingConsoleRootOptions = MessagingConsoleOptions & Partial<MessagingConsoleExtras>;

/** What `MessagingConsoleModule.forRootAsync()` takes: a factory (or class) making the options, and the path. */
export type MessagingConsoleAsyncOptions = ConfigurableModuleAsyncOptions<MessagingConsoleOptions, 'create'> &
  Partial<MessagingConsoleExtras>;
