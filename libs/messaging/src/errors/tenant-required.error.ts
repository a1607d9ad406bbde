import { MessagingError } from './messaging.error';

/**
 * Tenants are on (`tenants` option) and something that writes in a tenant's database ran with no tenant in
 * its context: nothing was written, and never in a default database.
 */
export class TenantRequiredError extends MessagingError {
  constructor(
    /** What was called, e.g. `OutboxService.add(OrderPlaced)`. */
    readonly operation: string,
  ) {
    super(
      `${operation} needs a tenant: run it inside MessagingTenants.run(tenant, …) (a middleware or ` +
        'interceptor that reads the tenant from the request, say). Nothing was written.',
    );
    this.name = 'TenantRequiredError';
  }
}
