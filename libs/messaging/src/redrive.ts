/**
 * Admin operations: redrive, moving dead letters back (plan → approve → execute), and declaring the topology
 * the services only check. The same code the `nest-messaging dlq | topology` CLI runs. It needs admin broker
 * credentials, which services never hold.
 *
 * @packageDocumentation
 */
export * from './redrive/index';
export { applyTopology, checkTopology } from './admin/apply-topology';
export type { TopicSettings, TopologyAdminOptions } from './admin/apply-topology';
export { parseKeySecret } from './failure/key-secret';
export type { KeySecret } from './failure/key-secret';
// Types the admin options above name, defined with the service side
export type { MessagingMetrics } from './observability/messaging-metrics';
export type {
  GroupTopology,
  JournalTopology,
  MessagingTopology,
  RabbitQueueType,
} from './topology/messaging-topology';
export { MessagingError } from './errors/messaging.error';
export type { CancelTimer, Clock } from './common/clock';
