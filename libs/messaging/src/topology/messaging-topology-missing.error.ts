import { MessagingTopology, topologyJson } from './messaging-topology';

/**
 * A service in `topology: 'verify'` mode (the default) found broker objects missing. It declares nothing
 * itself: an admin declares them with `messaging topology apply`.
 */
export class MessagingTopologyMissingError extends Error {
  constructor(
    readonly transport: 'kafka' | 'rabbitmq',
    readonly missing: readonly string[],
    readonly topology: MessagingTopology,
  ) {
    super(
      `Missing on ${transport}: ${missing.join(', ')}. Services only check their topology; declare it as an ` +
        'admin with `messaging topology apply --file topology.json` (admin credentials in MESSAGING_ADMIN_*), ' +
        `topology.json holding ${topologyJson(topology)}. In local development, topology: 'declare' lets ` +
        'the service declare it itself.',
    );
    this.name = 'MessagingTopologyMissingError';
  }
}
