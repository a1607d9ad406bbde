import { ServiceMigrations } from '@app/service-kit';
import { CreateMysqlSubscriptionsAndNotifications1764806400000 } from './create-mysql-subscriptions-and-notifications.migration';
import { CreateSubscriptionsAndNotifications1764633600000 } from './create-subscriptions-and-notifications.migration';

/** subscribe-service's own migrations, per database; the app runs them with the messaging library's at startup. */
export const SubscribeServiceMigrations: ServiceMigrations = {
  postgres: [CreateSubscriptionsAndNotifications1764633600000],
  mysql: [CreateMysqlSubscriptionsAndNotifications1764806400000],
};
