import { WireMessage } from '../src/envelope/wire-message';
import { readTenant, stampTenant, tenantSigningKey } from '../src/envelope/tenant-signature';
import { InboxService } from '../src/inbox/inbox.service';
import { OutboxService } from '../src/outbox/outbox.service';
import { TenantAdmission, TenantRouting } from '../src/transaction/tenant-routing';
import { TransactionHost } from '../src/transaction/transaction-host';
import { orderWire } from './pipeline-harness';

/** The key the specs' tenants are signed with. */
export const TENANT_KEY = tenantSigningKey(Buffer.alloc(32, 4).toString('base64'))!;

/** Tenants `acme` and `globex` registered (`registered` may change); signatures checked under `TENANT_KEY`. */
export class FakeTenants extends TenantRouting {
  readonly enabled = true;
  registered = new Set(['acme', 'globex']);
  outbox(): OutboxService {
    throw new Error('not in these specs');
  }
  transactions(): TransactionHost {
    throw new Error('not in these specs');
  }
  admit(_group: string, wire: WireMessage): TenantAdmission {
    const claim = readTenant(TENANT_KEY, wire);
    if (claim.kind === 'none') return { kind: 'missing' };
    if (claim.kind === 'forged') return { kind: 'forged' };
    return this.registered.has(claim.tenant) ? { kind: 'tenant', tenant: claim.tenant } : { kind: 'unknown' };
  }
  inbox(): InboxService | undefined {
    return undefined;
  }
  /** Tenants whose database does not answer `answers()` (their inboxes are the harness's to fail). */
  readonly silent = new Set<string>();
  /** The tenants `answers()` was asked about, in order. */
  readonly asked: string[] = [];
  async answers(tenant: string): Promise<boolean> {
    this.asked.push(tenant);
    return !this.silent.has(tenant);
  }
}

/** An order message of `tenant`, signed. */
export const tenantOrder = (tenant: string, orderId = 1, customer = 'c1'): WireMessage =>
  stampTenant(TENANT_KEY, tenant, orderWire({ orderId, customer }));
