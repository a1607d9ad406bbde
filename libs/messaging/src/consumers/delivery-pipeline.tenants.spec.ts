import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { InboxService } from '../inbox/inbox.service';
import { OutboxService } from '../outbox/outbox.service';
import { stampTenant, tenantSigningKey, readTenant } from '../envelope/tenant-signature';
import { TenantAdmission, TenantRouting } from '../transaction/tenant-routing';
import { TransactionHost } from '../transaction/transaction-host';
import { DeliveryPipeline } from './delivery-pipeline';
import { useQuietWarnings } from '../../spec-support/quiet-warnings';
import { DESTINATION, GROUP, Harness, idOf, orderWire } from '../../spec-support/pipeline-harness';

const KEY = tenantSigningKey(Buffer.alloc(32, 4).toString('base64'))!;

/** Tenants `acme` and `globex` registered; signatures checked under `KEY`. */
class Tenants extends TenantRouting {
  readonly enabled = true;
  registered = new Set(['acme', 'globex']);
  outbox(): OutboxService {
    throw new Error('not in these specs');
  }
  transactions(): TransactionHost {
    throw new Error('not in these specs');
  }
  admit(_group: string, wire: WireMessage): TenantAdmission {
    const claim = readTenant(KEY, wire);
    if (claim.kind === 'none') return { kind: 'missing' };
    if (claim.kind === 'forged') return { kind: 'forged' };
    return this.registered.has(claim.tenant) ? { kind: 'tenant', tenant: claim.tenant } : { kind: 'unknown' };
  }
  inbox(): InboxService | undefined {
    return undefined;
  }
}

const of = (tenant: string, orderId = 1, customer = 'c1') =>
  stampTenant(KEY, tenant, orderWire({ orderId, customer }));

describe(`${DeliveryPipeline.name} (tenants)`, () => {
  useQuietWarnings();

  it("runs a signed message's handler with its tenant, and records it in that tenant's inbox", async () => {
    const harness = new Harness({ tenants: new Tenants() });
    await expect(harness.handle(of('globex'))).resolves.toEqual({ kind: 'ACK' });
    expect(harness.calls.map((c) => c.tenant)).toEqual(['globex']);
    expect(harness.inbox.batchTenants).toEqual([['globex']]);
  });

  it.each([
    [
      'a forged tenant',
      (w: WireMessage) => ({ ...w, headers: { ...w.headers, [MessageHeaders.TENANT]: 'acme' } }),
      'TENANT_SIGNATURE_INVALID',
    ],
    ['no tenant', (w: WireMessage) => w, 'TENANT_MISSING'],
  ])('dead-letters %s at once and never runs the handler', async (_label, make, code) => {
    const harness = new Harness({ tenants: new Tenants() });
    const wire = make(orderWire());
    await expect(harness.handle(wire)).resolves.toEqual({ kind: 'ACK' });
    expect(harness.calls).toEqual([]);
    expect(harness.inbox.batches).toEqual([]);
    expect(
      harness.confirmed.map((copy) => [copy.destination, copy.headers[MessageHeaders.FAILURE_CODE]]),
    ).toEqual([[`${DESTINATION}.${GROUP}.dlq`, code]]);
  });

  it('holds a message of an unknown tenant (PAUSE on Kafka), then dead-letters it after the window', async () => {
    const harness = new Harness({
      tenants: new Tenants(),
      consumers: { versionHold: { windowMs: 5_000, initialDelayMs: 1_000, maxDelayMs: 1_000 } },
    });
    const wire = of('hooli');
    const first = await harness.handle(wire);
    expect(first.kind).toBe('PAUSE');
    expect(harness.held.heldNow().count).toBe(1);
    expect(harness.calls).toEqual([]);
    await harness.clock.advance(6_000);
    await expect(harness.handle(wire)).resolves.toEqual({ kind: 'ACK' });
    expect(harness.confirmed.map((copy) => copy.headers[MessageHeaders.FAILURE_CODE])).toEqual([
      'UNKNOWN_TENANT',
    ]);
    expect(harness.calls).toEqual([]);
  });

  it('applies a held message once its tenant is added', async () => {
    const tenants = new Tenants();
    const harness = new Harness({ tenants });
    const wire = of('hooli');
    expect((await harness.handle(wire)).kind).toBe('PAUSE');
    tenants.registered.add('hooli');
    await expect(harness.handle(wire)).resolves.toEqual({ kind: 'ACK' });
    expect(harness.calls.map((c) => [c.messageId, c.tenant])).toEqual([[idOf(wire), 'hooli']]);
    expect(harness.held.heldNow().count).toBe(0);
  });

  it("keeps a batch to one tenant's database: a batch ends where the tenant changes", async () => {
    const harness = new Harness({ tenants: new Tenants(), batchSize: 10 });
    const wires = [of('acme', 1, 'a'), of('acme', 2, 'b'), of('globex', 3, 'c'), of('acme', 4, 'd')];
    const settled = await harness.handleBatch(wires);
    expect(settled.every((s) => s.kind === 'ACK')).toBe(true);
    expect(harness.inbox.batchTenants).toEqual([['acme'], ['globex'], ['acme']]);
    expect(harness.inbox.batches.map((ids) => ids.length)).toEqual([2, 1, 1]);
  });
});
