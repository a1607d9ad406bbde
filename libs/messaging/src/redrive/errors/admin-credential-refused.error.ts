import { RedriveRefusedError } from './redrive-refused.error';

/**
 * The broker refused the credential for a redrive operation: it is not an admin's (for instance an
 * application's least-privilege user, which may not read dead-letter queues) or the login failed.
 */
export class AdminCredentialRefusedError extends RedriveRefusedError {
  /** The guard that refused: always `ADMIN_CREDENTIAL`. */
  readonly guard = 'ADMIN_CREDENTIAL' as const;

  /** @param options - `cause`, the broker's error */
  constructor(
    /** The user or principal the broker refused. */
    readonly principal: string,
    /** What was refused, e.g. `read redrive.orders.billing.dlq`. */
    readonly operation: string,
    options?: { cause?: unknown },
  ) {
    super(
      `The broker refused '${principal}' to ${operation}: redrive needs the admin credential (a user ` +
        `allowed to read dead-letter destinations), not an application's.`,
      options,
    );
    this.name = 'AdminCredentialRefusedError';
  }
}
