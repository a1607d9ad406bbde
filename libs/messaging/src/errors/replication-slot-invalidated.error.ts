import { MessagingError } from './messaging.error';

/**
 * PostgreSQL invalidated the relay's slot (`wal_status = 'lost'`): the log it had not read grew past
 * `max_slot_wal_keep_size` (a relay down, or too slow, for that long) and the server removed it. Messages
 * committed from the slot's last confirmed position on are only in the WAL archive now.
 */
export class ReplicationSlotInvalidatedError extends MessagingError {
  constructor(
    /** The invalidated slot. */
    readonly slot: string,
    /** The slot's last confirmed position, where recovery reads from (`16/B374D848`); undefined if unknown. */
    readonly confirmedLsn?: string,
  ) {
    super(
      `The replication slot '${slot}' was invalidated: PostgreSQL removed WAL it had not read ` +
        `(max_slot_wal_keep_size). Messages committed since ${confirmedLsn ?? 'its last confirmed position'} ` +
        'are not in the slot. Recover: nest-messaging relay slot recover --slot ' +
        `${slot} --wal-dir <WAL archive directory> replaces the slot and writes those messages into the log ` +
        'again from the archive (see the guide, "When the slot was invalidated").',
    );
    this.name = 'ReplicationSlotInvalidatedError';
  }
}
