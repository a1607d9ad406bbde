import { CreateSubscriptionsAndNotifications1764633600000 } from './create-subscriptions-and-notifications.migration';

/** subscribe-service's own migrations; the app runs them with the messaging library's at startup. */
export const SubscribeServiceMigrations = [CreateSubscriptionsAndNotifications1764633600000];
