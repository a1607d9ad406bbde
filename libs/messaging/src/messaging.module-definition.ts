import { ConfigurableModuleAsyncOptions, ConfigurableModuleBuilder, Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { MESSAGING_DATA_SOURCE } from './messaging.constants';
import { MessagingModuleExtras, MessagingModuleOptions } from './messaging-options.interface';

export const {
  ConfigurableModuleClass: ConfigurableMessagingModule,
  MODULE_OPTIONS_TOKEN: MESSAGING_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<MessagingModuleOptions>({ moduleName: 'Messaging' })
  .setClassMethodName('forRoot')
  .setExtras<MessagingModuleExtras>({ isGlobal: true, dataSource: undefined }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
    providers: [...(definition.providers ?? []), dataSourceProvider(extras.dataSource)],
  }))
  .build();

/** What `MessagingModule.forRoot()` takes: the options, plus where the module is registered. */
export type MessagingModuleRootOptions = MessagingModuleOptions & MessagingModuleExtras;

/**
 * What `MessagingModule.forRootAsync()` takes: `useFactory` (with `inject` and `imports`), `useClass` or
 * `useExisting` producing `MessagingModuleOptions`, plus where the module is registered.
 */
export type MessagingModuleAsyncOptions = ConfigurableModuleAsyncOptions<MessagingModuleOptions, 'create'> &
  MessagingModuleExtras;

/** The library writes in the application's TypeORM DataSource (the named one, or the default). */
function dataSourceProvider(name: string | undefined): Provider {
  return { provide: MESSAGING_DATA_SOURCE, useExisting: getDataSourceToken(name) };
}
