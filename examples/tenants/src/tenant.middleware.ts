import { Injectable, NestMiddleware } from '@nestjs/common';
import { MessagingTenants } from 'nest-reliable-messaging';

/**
 * Runs each request as its tenant (here from a header; take it from the verified token in production). A
 * request without one runs as no tenant: its writes fail with TenantRequiredError, never land elsewhere.
 */
@Injectable()
export class TenantMiddleware implements NestMiddleware {
  constructor(private readonly tenants: MessagingTenants) {}

  use(
    request: { headers: Record<string, string | string[] | undefined> },
    _response: unknown,
    next: () => void,
  ): void {
    const tenant = request.headers['x-tenant'];
    if (typeof tenant === 'string') this.tenants.run(tenant, next);
    else next();
  }
}
