import { MessageHeaders } from '../envelope/message-headers';
import { copiesOf, DeadLetterBackend } from './dead-letter-backend.interface';
import { DeadLetterRecord, describeRecord } from './dead-letter-record';
import { RedrivePlanAlteredError } from './errors/redrive-plan-altered.error';
import { RedriveLedger } from './ledger/redrive-ledger.interface';
import { checkDescriptions, checkUniquePositions } from './plan-descriptions';
import { RedriveApproval } from './redrive-approval';
import { runExecution } from './redrive-executor';
import { PlannedMessage, RedrivePlan } from './redrive-plan';

const record = (index: number, type = 'OrderPlaced'): DeadLetterRecord => ({
  position: { kind: 'queue', index },
  wire: {
    destination: 'orders.billing.dlq',
    key: null,
    headers: {
      [MessageHeaders.ID]: `m-${index}`,
      [MessageHeaders.TYPE]: type,
      [MessageHeaders.FAILURE_CATEGORY]: 'PERMANENT',
      [MessageHeaders.FAILURE_CODE]: 'CARD_DECLINED',
      [MessageHeaders.ORIGIN_DESTINATION]: 'orders',
    },
    body: Buffer.from(`{"n":${index}}`),
  },
});

const planOf = (messages: PlannedMessage[], action?: 'discard'): RedrivePlan => ({
  version: 2,
  transport: 'rabbitmq',
  plannedBy: 'carol',
  source: 'orders.billing.dlq',
  target: action ? 'orders.billing.dlq.archive' : 'orders.billing',
  group: 'billing',
  createdAt: '2026-12-06T10:00:00.000Z',
  depth: messages.length,
  messages,
  hash: 'sha256:x',
  ...(action ? { action } : {}),
});

/** What an approver would be shown for a message whose fingerprint and position are real. */
const benign = (m: PlannedMessage): PlannedMessage => ({
  ...m,
  type: 'HealthCheck',
  failureCategory: 'TRANSIENT',
  failureCode: 'TIMEOUT',
  messageId: 'm-other',
});

describe(checkDescriptions.name, () => {
  it('accepts the records a plan describes', () => {
    const records = [record(0), record(1)];
    expect(() => checkDescriptions(planOf(records.map(describeRecord)), records)).not.toThrow();
  });

  it('refuses a plan whose descriptions are not the messages, naming the fields, not their values', () => {
    const records = [record(0), record(1)];
    const plan = planOf([describeRecord(records[0]), benign(describeRecord(records[1]))]);
    let error: unknown;
    try {
      checkDescriptions(plan, records);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RedrivePlanAlteredError);
    expect((error as RedrivePlanAlteredError).differences).toEqual([
      "the plan's description of the message at q1 differs in messageId, type, failureCategory, failureCode",
    ]);
    expect((error as Error).message).not.toContain('HealthCheck');
  });
});

describe(checkUniquePositions.name, () => {
  it('refuses a plan that names one position twice', () => {
    const m = describeRecord(record(0));
    expect(() => checkUniquePositions(planOf([m, m]))).toThrow(/positions named more than once: q0/);
    expect(() => checkUniquePositions(planOf([m, describeRecord(record(1))]))).not.toThrow();
  });
});

describe(`${runExecution.name} (issue 45 finding 11: execution re-derives what the approver read)`, () => {
  const approval: RedriveApproval = {
    version: 2,
    planHash: 'sha256:x',
    approver: 'jane',
    nonce: 'n',
    approvedAt: '2026-12-06T10:00:00.000Z',
    expiresAt: '2026-12-06T11:00:00.000Z',
    signature: 's',
  };
  const setup = (records: DeadLetterRecord[]) => {
    const published: string[] = [];
    const backend = {
      kind: 'rabbitmq',
      checkTarget: async () => undefined,
      ensureArchive: async () => undefined,
      move: async (plan, copyOf, checkRead) => {
        checkRead(records);
        for (const r of records) published.push(...copiesOf(copyOf, r).map((c) => c.destination));
        return plan.messages.map((m) => ({
          position: m.position,
          messageId: m.messageId,
          status: 'REDRIVEN',
        }));
      },
    } as Partial<DeadLetterBackend> as DeadLetterBackend;
    const claimed: string[] = [];
    const ledger = {
      withExclusiveHold: async <T>(_t: string, _s: string, work: () => Promise<T>) => work(),
      claimApproval: async (use: { nonce: string }) => {
        claimed.push(use.nonce);
        return { claimed: true as const };
      },
    } as Partial<RedriveLedger> as RedriveLedger;
    return { backend, ledger, published, claimed };
  };
  const run = (plan: RedrivePlan, records: DeadLetterRecord[]) => {
    const { backend, ledger, published, claimed } = setup(records);
    const done = runExecution({ backend, ledger }, { plan, approval, executedBy: 'bob', redriveId: 'r' });
    return { done, published, claimed };
  };

  it('moves nothing when a description was forged over real positions and fingerprints', async () => {
    for (const action of [undefined, 'discard'] as const) {
      const records = [record(0, 'OrderRefunded')];
      const { done, published } = run(planOf([benign(describeRecord(records[0]))], action), records);
      await expect(done).rejects.toThrow(RedrivePlanAlteredError);
      expect(published).toEqual([]);
    }
  });

  it('refuses a plan with a position twice before its approval is claimed', async () => {
    const records = [record(0)];
    const m = describeRecord(records[0]);
    const { done, claimed, published } = run(planOf([m, m]), records);
    await expect(done).rejects.toThrow(/positions named more than once/);
    expect(claimed).toEqual([]);
    expect(published).toEqual([]);
  });

  it('moves a plan whose descriptions hold', async () => {
    const records = [record(0), record(1)];
    const { done, published } = run(planOf(records.map(describeRecord)), records);
    await expect(done).resolves.toMatchObject({ redriven: 2 });
    expect(published).toHaveLength(2);
  });
});
