import type { WireMessage } from '../envelope/wire-message';
import type { TransactionHost } from './transaction-host';

/**
 * What a consumer may do with a delivery's tenant: `off` (tenants off: the service's DataSource), apply it in
 * `tenant`'s database, hold it (`unknown`: not registered, or removed), or refuse it (`forged`: the signature
 * does not hold; `missing`: no tenant, with tenants on).
 */
export type TenantAdmission =
  | { readonly kind: 'off' }
  | { readonly kind: 'tenant'; readonly tenant: string }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'forged' }
  | { readonly kind: 'missing' };

/**
 * The tenants as the outbox, the `@Outbox()` wrapper and the consumers see them (`MessagingTenants`, which
 * holds them): a contract of its own, so that those stand lower than the registry. `Outbox` and `Inbox` are the
 * outbox and inbox services (`OutboxService`, `InboxService`), named by those who use them: this contract stands
 * below both.
 */
export abstract class TenantRouting<Outbox = unknown, Inbox = unknown> {
  /** True when the `tenants` option is on: every write and every delivery belongs to a tenant. */
  abstract readonly enabled: boolean;
  /** The current tenant's outbox; throws `TenantRequiredError` or `UnknownTenantError` for `operation`. */
  abstract outbox(operation: string): Outbox;
  /** The current tenant's transactions; throws `TenantRequiredError` or `UnknownTenantError` for `operation`. */
  abstract transactions(operation: string): TransactionHost;
  /** Reads and checks a delivery's tenant (counts a refusal for `group`). */
  abstract admit(group: string, wire: WireMessage): TenantAdmission;
  /** The tenant's inbox; undefined when it is not registered (any more). */
  abstract inbox(tenant: string): Inbox | undefined;
  /**
   * Whether the tenant's database answers a trivial query within `timeoutMs`; true when it is not registered
   * (any more), where what becomes of its deliveries is the consumer's to say.
   */
  abstract answers(tenant: string, timeoutMs: number): Promise<boolean>;
}
