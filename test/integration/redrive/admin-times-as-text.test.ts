import { types } from 'pg';
import { PostgresConsolePlanStore } from 'nest-reliable-messaging/console';
import { PostgresRedriveLedger, RedrivePlan, RedriveResult, sealPlan } from 'nest-reliable-messaging/redrive';
import { createTestSchema, TestSchema } from '../../harness/postgres';

const TIMESTAMPTZ = 1184;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const plan: RedrivePlan = sealPlan({
  version: 2,
  transport: 'rabbitmq',
  plannedBy: 'alice',
  source: 'orders.billing.dlq',
  target: 'orders.billing',
  group: 'billing',
  createdAt: new Date().toISOString(),
  depth: 0,
  messages: [],
});

const result: RedriveResult = {
  redriveId: '0190a1b2-0000-7000-8000-0000000000fe',
  source: plan.source,
  target: plan.target,
  redriven: 0,
  leftInSource: 0,
  messages: [],
};

/**
 * pg's type parsers are global to the process, and an application may read `timestamptz` as text (to keep
 * microseconds, or for a date library). The admin database's readers (the audit log and its hash chain, an
 * approval's earlier use, the console's plans) give the same times either way; before, they called
 * `toISOString()` on the text and failed: the console's audit and plan pages, `dlq history --verify`.
 */
describe('The admin database in an application that reads timestamptz as text', () => {
  let db: TestSchema;
  let ledger: PostgresRedriveLedger;
  let plans: PostgresConsolePlanStore;
  const parser = types.getTypeParser(TIMESTAMPTZ) as (text: string) => unknown;

  const record = (detail: string) =>
    ledger.record({
      action: 'PLAN',
      actor: 'alice',
      transport: 'rabbitmq',
      source: plan.source,
      outcome: 'PLANNED',
      detail,
    });

  beforeAll(async () => {
    db = await createTestSchema('admin_times_text');
    await PostgresRedriveLedger.migrate({ url: db.databaseUrl, schema: db.name });
    ledger = await PostgresRedriveLedger.connect({ url: db.databaseUrl, schema: db.name });
    plans = await PostgresConsolePlanStore.connect({ url: db.databaseUrl, schema: db.name });
  });

  afterAll(async () => {
    types.setTypeParser(TIMESTAMPTZ, parser);
    await plans?.close();
    await ledger?.close();
    await db?.drop();
  });

  it('reads the audit log, checks its chain, names an approval’s first use and reads a plan’s times', async () => {
    await record('first');
    await record('second');
    const asDates = await ledger.history({ limit: 10 });
    const use = {
      nonce: 'BBBBBBBBBBBBBBBBBBBBBB',
      planHash: plan.hash,
      approver: 'bob',
      redriveId: result.redriveId,
      executedBy: 'ops-alice',
    };
    expect(await ledger.claimApproval(use)).toEqual({ claimed: true });
    const entry = await plans.add(plan);
    expect(await plans.executed(entry.id, result, 'alice')).toBe(true);
    await plans.stale(entry.id);

    types.setTypeParser(TIMESTAMPTZ, (text: string) => text);
    try {
      await record('third');
      const asText = await ledger.history({ limit: 10 });
      expect(asText.map((e) => e.detail)).toEqual(['first', 'second', 'third']);
      for (const e of asText) expect(e.at).toBeInstanceOf(Date);
      expect(asText.slice(0, 2).map((e) => e.at.toISOString())).toEqual(
        asDates.map((e) => e.at.toISOString()),
      );
      expect(await ledger.verifyChain()).toMatchObject({ intact: true, checked: 3 });

      const again = await ledger.claimApproval(use);
      expect(again.claimed).toBe(false);
      expect(again.claimed === false && again.usedBy).toMatch(/^ops-alice at \d{4}-\d\d-\d\dT.*Z$/);

      const kept = await plans.get(entry.id);
      expect(kept?.executedAt).toMatch(ISO);
      expect(kept?.staleAt).toMatch(ISO);
    } finally {
      types.setTypeParser(TIMESTAMPTZ, parser);
    }
  });
});
