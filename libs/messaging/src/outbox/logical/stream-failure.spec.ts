import { LogicalDecodingUnavailableError } from '../../errors/logical-decoding-unavailable.error';
import { ReplicationSlotInvalidatedError } from '../../errors/replication-slot-invalidated.error';
import { ReplicationSlotMissingError } from '../../errors/replication-slot-missing.error';
import { logicalNames, tenantLogicalNames } from './logical-names';
import { classifyStreamFailure } from './stream-failure';

const pgError = (code: string) => Object.assign(new Error('server said no'), { code });

describe(classifyStreamFailure.name, () => {
  it.each<[string, unknown, boolean, unknown]>([
    ['a slot in use (another reader)', pgError('55006'), false, { kind: 'standby' }],
    ['no such slot', pgError('42704'), false, { kind: 'slot', problem: 'missing' }],
    ['no REPLICATION attribute', pgError('42501'), false, { kind: 'server' }],
    ['no pg_hba.conf entry for replication', pgError('28000'), false, { kind: 'server' }],
    // Defect F12: PostgreSQL 13's pgoutput refuses `messages`; it was retried for ever as a connection failure.
    ['an option the server refuses (PostgreSQL 13)', pgError('22023'), false, { kind: 'server' }],
    ['a 55000 on an invalidated slot', pgError('55000'), true, { kind: 'slot', problem: 'invalidated' }],
    ['a 55000 otherwise (wal_level)', pgError('55000'), false, { kind: 'server' }],
    ['a dropped connection', new Error('Connection terminated unexpectedly'), false, { kind: 'connection' }],
    ['a server shutting down', pgError('57P01'), false, { kind: 'connection' }],
    [
      'the startup check: no slot',
      new ReplicationSlotMissingError('s'),
      false,
      { kind: 'slot', problem: 'missing' },
    ],
    [
      'the startup check: invalidated',
      new ReplicationSlotInvalidatedError('s'),
      false,
      { kind: 'slot', problem: 'invalidated' },
    ],
    ['the startup check: the server', new LogicalDecodingUnavailableError(['x']), false, { kind: 'server' }],
  ])('classifies %s', async (_, error, lost, expected) => {
    expect(await classifyStreamFailure(error, () => Promise.resolve(lost))).toEqual(expected);
  });

  it('takes a failed look at the slot as not invalidated', async () => {
    expect(await classifyStreamFailure(pgError('55000'), () => Promise.reject(new Error('down')))).toEqual({
      kind: 'server',
    });
  });
});

describe(logicalNames.name, () => {
  it('derives the slot from the schema, and tags messages with it', () => {
    expect(logicalNames(undefined)).toEqual({
      slot: 'messaging_outbox',
      publication: 'messaging_outbox',
      prefix: 'nest-reliable-messaging:messaging_outbox',
    });
    expect(logicalNames('Post-Service').slot).toBe('messaging_outbox_post_service');
    expect(logicalNames('public', 'orders_outbox').slot).toBe('orders_outbox');
  });

  it('keeps a long schema name within 63 characters, distinct per schema', () => {
    const a = logicalNames('s'.repeat(63)).slot;
    const b = logicalNames(`${'s'.repeat(62)}t`).slot;
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
  });
});

describe(tenantLogicalNames.name, () => {
  it("names a tenant's slot after the tenant: slot names are the server's, tenants' databases may share one", () => {
    expect(tenantLogicalNames('acme')).toEqual({
      slot: 'messaging_tenant_acme',
      publication: 'messaging_tenant_acme',
      prefix: 'nest-reliable-messaging:messaging_tenant_acme',
    });
  });

  it('makes any tenant name a slot name of at most 63 characters, distinct per tenant', () => {
    const names = ['a-b', 'a_b', 'A_b', 'a.b', 'x'.repeat(63), `${'x'.repeat(62)}y`];
    const slots = names.map((tenant) => tenantLogicalNames(tenant).slot);
    for (const slot of slots) expect(slot).toMatch(/^[a-z0-9_]{1,63}$/);
    expect(new Set(slots).size).toBe(names.length);
  });
});
