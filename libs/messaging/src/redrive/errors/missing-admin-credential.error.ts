import { RedriveRefusedError } from './redrive-refused.error';

/** No admin credential was given: redrive, planning included, needs one the application runtime does not hold. */
export class MissingAdminCredentialError extends RedriveRefusedError {
  /** The guard that refused: always `ADMIN_CREDENTIAL`. */
  readonly guard = 'ADMIN_CREDENTIAL' as const;

  constructor() {
    super(
      'Redrive needs an admin credential, which the application runtime does not hold: give the admin ' +
        'principal and password (MESSAGING_ADMIN_PRINCIPAL and MESSAGING_ADMIN_PASSWORD, or the admin user in ' +
        'MESSAGING_ADMIN_AMQP_URL).',
    );
    this.name = 'MissingAdminCredentialError';
  }
}
