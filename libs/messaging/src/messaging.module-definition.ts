import { ConfigurableModuleBuilder, Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { MESSAGING_DATA_SOURCE } from './messaging.constants';
import { MessagingModuleExtras, MessagingModuleOptions } from './messaging-options.interface';

export const {
  ConfigurableModuleClass: ConfigurableMessagingModule,
  MODULE_OPTIONS_TOKEN: MESSAGING_MODULE_OPTIONS,
  OPTIONS_TYPE: MESSAGING_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: MESSAGING_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<MessagingModuleOptions>({ moduleName: 'Messaging' })
  .setClassMethodName('forRoot')
  .setExtras<MessagingModuleExtras>({ isGlobal: true, dataSource: undefined }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
    providers: [...(definition.providers ?? []), dataSourceProvider(extras.dataSource)],
  }))
  .build();

/** The library writes in the application's TypeORM DataSource (the named one, or the default). */
function dataSourceProvider(name: string | undefined): Provider {
  return { provide: MESSAGING_DATA_SOURCE, useExisting: getDataSourceToken(name) };
}
