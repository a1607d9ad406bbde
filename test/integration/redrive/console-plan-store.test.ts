import { Client } from 'pg';
import { PostgresConsolePlanStore } from 'nest-reliable-messaging/console';
import {
  PostgresRedriveLedger,
  RedriveApproval,
  RedrivePlan,
  RedriveResult,
  sealPlan,
} from 'nest-reliable-messaging/redrive';
import { AdminDatabaseRoles } from './support/admin-database-roles';

const DLQ = 'orders.billing.dlq';

// A real plan, sealed: the store shows only plans that match their hash (issue 45 item 1).
const plan = (fingerprint: string, messageId = '0190a1b2-0000-7000-8000-000000000001'): RedrivePlan =>
  sealPlan({
    version: 2,
    transport: 'rabbitmq',
    plannedBy: 'alice',
    source: DLQ,
    target: 'orders.billing',
    group: 'billing',
    createdAt: new Date().toISOString(),
    depth: 1,
    messages: [
      {
        position: { kind: 'queue', index: 0 },
        messageId,
        type: 'OrderPlaced',
        failureCategory: 'PERMANENT',
        failureCode: 'QueryFailedError/P0001',
        attempts: 3,
        originDestination: 'orders',
        lastFailureAt: null,
        redriveCount: 0,
        previousRedriveIds: [],
        fingerprint,
      },
    ],
  });

const approval = (p: RedrivePlan, approver = 'bob'): RedriveApproval => ({
  version: 2,
  planHash: p.hash,
  approver,
  nonce: `nonce-${approver}`.padEnd(22, '0'), // the shape a real nonce has (22 base64url characters)
  approvedAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 15 * 60_000).toISOString(),
  signature: 'c2lnbmF0dXJl',
});

const result = (p: RedrivePlan): RedriveResult => ({
  redriveId: '0190a1b2-0000-7000-8000-0000000000ff',
  source: p.source,
  target: p.target,
  redriven: 1,
  leftInSource: 0,
  messages: [{ position: p.messages[0].position, messageId: p.messages[0].messageId, status: 'REDRIVEN' }],
});

/**
 * Issue 29, item 6: the console's plans live in the admin database, so a console restart loses none, with
 * the least privilege the guide gives the console's login: it reads and adds plans and changes only what a
 * step changes (approval, result, staleness, refusals); it cannot delete a plan, change what was planned, or
 * replace an approval or a result (the owner cannot either: a trigger).
 */
describe('The console’s plans in the admin database (issue 29)', () => {
  let roles: AdminDatabaseRoles;
  let asRedrive: Client;
  let asOwner: Client;
  const stores: PostgresConsolePlanStore[] = [];

  const open = async () => {
    const store = await PostgresConsolePlanStore.connect({ url: roles.redrive.url, schema: roles.schema });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    roles = await AdminDatabaseRoles.create('cplan');
    await PostgresRedriveLedger.migrate({ url: roles.owner.url, schema: roles.schema });
    await roles.grant();
    asRedrive = await roles.connect(roles.redrive);
    asOwner = await roles.connect(roles.owner);
  });

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await asRedrive?.end();
    await asOwner?.end();
    await roles?.drop();
  });

  // claim: C-81
  it('keeps a plan, its approval, its result and refusals across a restart of the console', async () => {
    const first = await open();
    const p = plan('aa');
    const entry = await first.add(p);
    await first.refused(
      entry.id,
      'olga',
      'Four eyes: the person who made or runs a plan may not approve it.',
    );
    const given = approval(p);
    expect(await first.approved(entry.id, given, 'bob')).toBe(true);
    await first.close();
    stores.pop();

    const second = await open(); // the console, restarted
    const kept = await second.get(entry.id);
    expect(kept).toEqual({
      id: entry.id,
      plan: p,
      approval: given,
      refusals: {
        olga: { message: expect.stringContaining('Four eyes') as unknown, at: expect.any(String) as unknown },
      },
    });
    await second.refused(entry.id, 'alice', 'Refused (APPROVAL_EXPIRED): …');
    expect(await second.executed(entry.id, result(p), 'alice')).toBe(true);
    const done = await second.get(entry.id);
    expect(done?.result).toEqual(result(p));
    expect(done?.executedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(Object.keys(done?.refusals ?? {})).toEqual(['olga']); // alice's step went through after all
    expect((await second.list({ source: DLQ, limit: 10 })).map((e) => e.id)).toContain(entry.id);
    expect(await second.get('not-a-uuid')).toBeUndefined();
  });

  it('approves and executes a plan once: a second approval or result changes nothing', async () => {
    const store = await open();
    const p = plan('bb');
    const entry = await store.add(p);
    const approvals = await Promise.all([
      store.approved(entry.id, approval(p, 'bob'), 'bob'),
      store.approved(entry.id, approval(p, 'carol'), 'carol'),
    ]);
    expect(approvals.filter(Boolean)).toHaveLength(1);
    expect(await store.executed(entry.id, result(p), 'alice')).toBe(true);
    expect(await store.executed(entry.id, { ...result(p), redriven: 0 }, 'alice')).toBe(false);
    expect(await store.approved(entry.id, approval(p, 'dave'), 'dave')).toBe(false);
    await store.stale(entry.id);
    expect((await store.get(entry.id))?.result?.redriven).toBe(1);
  });

  it('lets the console’s login change only what a step changes; nobody replaces an approval', async () => {
    const store = await open();
    const p = plan('cc');
    const entry = await store.add(p);
    await store.approved(entry.id, approval(p), 'bob');
    const t = `${roles.schema}.messaging_console_plan`;
    await expect(asRedrive.query(`delete from ${t} where id = $1`, [entry.id])).rejects.toThrow(
      /permission denied/,
    );
    await expect(
      asRedrive.query(`update ${t} set plan = '{}'::jsonb where id = $1`, [entry.id]),
    ).rejects.toThrow(/permission denied/);
    await expect(
      asRedrive.query(`update ${t} set planned_by = 'mallory' where id = $1`, [entry.id]),
    ).rejects.toThrow(/permission denied/);
    await expect(asRedrive.query(`truncate ${t}`)).rejects.toThrow(/permission denied/);
    const other = JSON.stringify(approval(p, 'mallory'));
    await expect(
      asRedrive.query(`update ${t} set approval = $2::jsonb where id = $1`, [entry.id, other]),
    ).rejects.toThrow(/written once/);
    await expect(
      asOwner.query(`update ${t} set approval = $2::jsonb where id = $1`, [entry.id, other]),
    ).rejects.toThrow(/written once/);
    expect((await store.get(entry.id))?.approval?.approver).toBe('bob');
  });

  // Issue 45 finding 14: PostgreSQL refuses U+0000 in jsonb and text, so a plan of a DLQ message whose id
  // holds one could not be stored (a 500 for every plan of the queue's head), and neither could its result.
  it('keeps a plan of a message whose id holds a NUL: planned, refused, approved, executed, read back exactly', async () => {
    const store = await open();
    const ledger = await PostgresRedriveLedger.connect({ url: roles.redrive.url, schema: roles.schema });
    try {
      const id = 'order-7\u0000\\u{0}-end'; // a NUL, and a backslash-u{0} written as such
      const p = plan('dd', id);
      const entry = await store.add(p);
      await ledger.record({
        action: 'PLAN',
        actor: 'alice',
        transport: 'rabbitmq',
        source: DLQ,
        planHash: p.hash,
        messageIds: [id],
        outcome: 'PLANNED',
      });
      await store.refused(entry.id, 'alice', `Refused: message ${id} is yours`);
      expect((await store.get(entry.id))?.refusals.alice?.message).toBe(`Refused: message ${id} is yours`);
      const given = approval(p);
      expect(await store.approved(entry.id, given, 'bob')).toBe(true);
      expect(await store.executed(entry.id, result(p), 'alice')).toBe(true);
      const kept = await store.get(entry.id);
      expect(kept?.plan).toEqual(p);
      expect(kept?.plan.messages[0].messageId).toBe(id);
      expect(kept?.approval).toEqual(given);
      expect(kept?.result).toEqual(result(p));
      expect(kept?.refusals).toEqual({});
      expect((await store.list({ source: DLQ, limit: 50 })).map((e) => e.id)).toContain(entry.id);
      // Stored as the audit log stores it: the NUL as \u{0}.
      const t = `${roles.schema}.messaging_console_plan`;
      const { rows } = await asRedrive.query<{ ids: string }>(
        `select plan->'messages'->0->>'messageId' as ids from ${t} where id = $1`,
        [entry.id],
      );
      expect(rows[0].ids).toBe('order-7\\u{0}\\u{5c}u{0}-end');
    } finally {
      await ledger.close();
    }
  });

  it('says which migration is missing when the table is not there', async () => {
    await expect(
      PostgresConsolePlanStore.connect({ url: roles.redrive.url, schema: `${roles.schema}_none` }),
    ).rejects.toThrow(/no table .*messaging_console_plan.*CreateConsolePlans1765065600000/);
  });
});
