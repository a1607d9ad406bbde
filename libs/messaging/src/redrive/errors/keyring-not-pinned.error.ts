import { RedriveRefusedError } from './redrive-refused.error';

/**
 * The approver keyring in use is not the one the admin database pins: the executor (or approver) named
 * another keyring file than the reviewed one. Use the reviewed file, or have the tables' owner pin the new
 * one after review (`nest-messaging db pin-keyring`).
 */
export class KeyringNotPinnedError extends RedriveRefusedError {
  /** The guard that refused: always `KEYRING_NOT_PINNED`. */
  readonly guard = 'KEYRING_NOT_PINNED' as const;

  constructor(
    /** The fingerprint of the keyring in use. */
    readonly fingerprint: string,
    /** The fingerprint the admin database pins. */
    readonly pinned: string,
  ) {
    super(
      `Redrive refused: the approver keyring in use (${fingerprint}) is not the reviewed one the admin ` +
        `database pins (${pinned}). Use the reviewed keyring file, or have the tables' owner pin the new one ` +
        'after review (nest-messaging db pin-keyring).',
    );
    this.name = 'KeyringNotPinnedError';
  }
}
