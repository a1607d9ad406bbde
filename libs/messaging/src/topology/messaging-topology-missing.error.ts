import { MessagingError } from '../errors/messaging.error';
import { MessagingTopology, topologyJson } from './messaging-topology';

/**
 * A service in `topology: 'verify'` mode (the default) found broker objects missing. It declares nothing
 * itself: an admin declares them with `nest-messaging topology apply`.
 */
export class MessagingTopologyMissingError extends MessagingError {
  constructor(
    /** The broker that was checked. */
    readonly transport: 'kafka' | 'rabbitmq',
    /** What is missing, described for people, e.g. `queue 'orders.billing.dlq'`. */
    readonly missing: readonly string[],
    /** The topology the service needs: what to apply. */
    readonly topology: MessagingTopology,
  ) {
    super(
      `Missing on ${transport}: ${missing.join(', ')}. Services only check their topology; declare it as an ` +
        'admin with `nest-messaging topology apply --file topology.json` (admin credentials in MESSAGING_ADMIN_*), ' +
        `topology.json holding ${topologyJson(topology)}. In local development, topology: 'declare' lets ` +
        'the service declare it itself.',
    );
    this.name = 'MessagingTopologyMissingError';
  }
}
