/**
 * Admin operations: redrive, moving dead letters back (plan → approve → execute), and declaring the topology
 * the services only check. The same code the `nest-messaging dlq | topology` CLI runs. It needs admin broker
 * credentials, which services never hold.
 *
 * @packageDocumentation
 */
export * from './dead-letter/redrive';
export { applyTopology, checkTopology } from './admin/apply-topology';
export type { TopicSettings, TopologyAdminOptions } from './admin/apply-topology';
export { parseKeySecret } from './failure/key-secret';
export type { KeySecret } from './failure/key-secret';
