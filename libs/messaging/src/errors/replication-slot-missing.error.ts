import { MessagingError } from './messaging.error';

/**
 * `relay.mode: 'logical'` and the replication slot does not exist (or is not this database's pgoutput slot).
 * Messages written without a slot would be in no slot's reach, so the application does not start.
 */
export class ReplicationSlotMissingError extends MessagingError {
  constructor(
    /** The slot the options name (`relay.slot`, or the default derived from the schema). */
    readonly slot: string,
    /** What is wrong with it: `does not exist`, or what it is instead. */
    readonly problem = 'does not exist',
  ) {
    super(
      `The replication slot '${slot}' ${problem}. Create it (and its publication) as a role with the ` +
        `REPLICATION attribute before the service starts: nest-messaging relay slot create --slot ${slot} ` +
        '(with MESSAGING_RELAY_DATABASE_URL naming the service database).',
    );
    this.name = 'ReplicationSlotMissingError';
  }
}
