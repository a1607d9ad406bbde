import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { DeliveryPipeline } from './delivery-pipeline';
import { useQuietWarnings } from '../../spec-support/quiet-warnings';
import { DESTINATION, GROUP, Harness, idOf, orderWire } from '../../spec-support/pipeline-harness';
import { FakeTenants, tenantOrder } from '../../spec-support/fake-tenants';

describe(`${DeliveryPipeline.name} (tenants)`, () => {
  useQuietWarnings();

  it("runs a signed message's handler with its tenant, and records it in that tenant's inbox", async () => {
    const harness = new Harness({ tenants: new FakeTenants() });
    await expect(harness.handle(tenantOrder('globex'))).resolves.toEqual({ kind: 'ACK' });
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
    const harness = new Harness({ tenants: new FakeTenants() });
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
      tenants: new FakeTenants(),
      consumers: { versionHold: { windowMs: 5_000, initialDelayMs: 1_000, maxDelayMs: 1_000 } },
    });
    const wire = tenantOrder('hooli');
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
    const tenants = new FakeTenants();
    const harness = new Harness({ tenants });
    const wire = tenantOrder('hooli');
    expect((await harness.handle(wire)).kind).toBe('PAUSE');
    tenants.registered.add('hooli');
    await expect(harness.handle(wire)).resolves.toEqual({ kind: 'ACK' });
    expect(harness.calls.map((c) => [c.messageId, c.tenant])).toEqual([[idOf(wire), 'hooli']]);
    expect(harness.held.heldNow().count).toBe(0);
  });

  it("keeps a batch to one tenant's database: a batch ends where the tenant changes", async () => {
    const harness = new Harness({ tenants: new FakeTenants(), batchSize: 10 });
    const wires = [
      tenantOrder('acme', 1, 'a'),
      tenantOrder('acme', 2, 'b'),
      tenantOrder('globex', 3, 'c'),
      tenantOrder('acme', 4, 'd'),
    ];
    const settled = await harness.handleBatch(wires);
    expect(settled.every((s) => s.kind === 'ACK')).toBe(true);
    expect(harness.inbox.batchTenants).toEqual([['acme'], ['globex'], ['acme']]);
    expect(harness.inbox.batches.map((ids) => ids.length)).toEqual([2, 1, 1]);
  });
});
