import { MessagingError } from './messaging.error';

/** A tenant named by the caller is not registered (never added, or removed): nothing was written. */
export class UnknownTenantError extends MessagingError {
  constructor(
    /** The tenant named. */
    readonly tenant: string,
    /** What was called, e.g. `OutboxService.add(OrderPlaced)`. */
    readonly operation: string,
  ) {
    super(
      `${operation}: tenant '${tenant}' is not registered. Add it with MessagingTenants.add('${tenant}', ` +
        'dataSource) first. Nothing was written.',
    );
    this.name = 'UnknownTenantError';
  }
}
