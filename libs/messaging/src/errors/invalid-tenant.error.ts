import { MessagingError } from './messaging.error';

/** `MessagingTenants.add()` refused a tenant: its name, its DataSource, or the relay mode. */
export class InvalidTenantError extends MessagingError {
  constructor(
    /** The tenant named. */
    readonly tenant: string,
    /** What is wrong, and how to fix it. */
    readonly problem: string,
  ) {
    super(`Tenant '${tenant}': ${problem}`);
    this.name = 'InvalidTenantError';
  }
}
