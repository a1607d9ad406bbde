import { MessagingError } from '../errors/messaging.error';

/**
 * A broker object exists with other settings than the service expects, e.g. a classic queue where the
 * options ask for a quorum queue. Neither broker changes a queue's type or arguments in place: move the
 * messages out, delete the queue and declare it again (`nest-messaging topology apply`), or change the
 * options to match.
 */
export class MessagingTopologyMismatchError extends MessagingError {
  constructor(
    /** The broker that was checked. */
    readonly transport: 'kafka' | 'rabbitmq',
    /** Each object that differs and how, described for people, e.g. `queue 'orders.billing' is classic, expected quorum`. */
    readonly mismatches: readonly string[],
  ) {
    super(
      `Broker objects on ${transport} differ from what the service is configured for: ${mismatches.join('; ')}. ` +
        'A queue cannot change its type or arguments in place: drain it (the DLQ with a redrive), delete it and ' +
        'declare it again with `nest-messaging topology apply`, or change the service options to match.',
    );
    this.name = 'MessagingTopologyMismatchError';
  }
}
