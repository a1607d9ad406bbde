import { ConfigurableModuleAsyncOptions, ConfigurableModuleBuilder } from '@nestjs/common';
import { MessagingConsoleExtras, MessagingConsoleOptions } from './console-options.interface';

const definition = new ConfigurableModuleBuilder<MessagingConsoleOptions>({ moduleName: 'MessagingConsole' })
  .setClassMethodName('forRoot')
  .setExtras<MessagingConsoleExtras>({ path: 'console' }, (definition) => definition)
  .build();

/** The class `ConfigurableModuleBuilder` made, which `MessagingConsoleModule` extends: use that one. */
export const ConfigurableMessagingConsoleModule = definition.ConfigurableModuleClass;
/** The token of the options given to `MessagingConsoleModule.forRoot()`/`forRootAsync()`. */
export const MESSAGING_CONSOLE_OPTIONS = definition.MODULE_OPTIONS_TOKEN;

/** What `MessagingConsoleModule.forRoot()` takes: the options, plus the path it is mounted at. */
export type MessagingConsoleRootOptions = MessagingConsoleOptions & Partial<MessagingConsoleExtras>;

/** What `MessagingConsoleModule.forRootAsync()` takes: a factory (or class) making the options, and the path. */
export type MessagingConsoleAsyncOptions = ConfigurableModuleAsyncOptions<MessagingConsoleOptions, 'create'> &
  Partial<MessagingConsoleExtras>;
