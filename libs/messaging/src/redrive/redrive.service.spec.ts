import { ApproverKeyring } from './approvals/approver-keyring';
import { generateApproverKeys, readApproverSigner } from './approvals/approver-keys';
import { ApprovedRedrivePlan } from './approved-redrive-plan';
import { ApprovalAlreadyUsedError } from './errors/approval-already-used.error';
import { ApprovalExpiredError } from './errors/approval-expired.error';
import { ApprovalMismatchError } from './errors/approval-mismatch.error';
import { ApprovalRequiredError } from './errors/approval-required.error';
import { InsecureAdminConnectionError } from './errors/insecure-admin-connection.error';
import { KeyringNotPinnedError } from './errors/keyring-not-pinned.error';
import { MissingAdminCredentialError } from './errors/missing-admin-credential.error';
import { NotADeadLetterSourceError } from './errors/not-a-dead-letter-source.error';
import { RedriveBatchTooLargeError } from './errors/redrive-batch-too-large.error';
import { RedriveInProgressError } from './errors/redrive-in-progress.error';
import { RedrivePlanAlteredError } from './errors/redrive-plan-altered.error';
import { RedriveTargetRefusedError } from './errors/redrive-target-refused.error';
import { SameSourceAndTargetError } from './errors/same-source-and-target.error';
import { ApprovalUse, RedriveAuditEntry, RedriveLedger } from './ledger/redrive-ledger.interface';
import { RedriveApproval, signApproval } from './redrive-approval';
import { PlannedMessage, RedrivePlan, sealPlan } from './redrive-plan';
import { RedriveService } from './redrive.service';

const t0 = new Date('2026-01-01T10:00:00.000Z');
const jane = generateApproverKeys('jane');
/** The identity map: jane approves; alice plans; carol and dave execute (one credential, a console user). */
const approvers = ApproverKeyring.parse({
  version: 2,
  people: [
    { name: 'jane', publicKey: jane.publicKey.publicKey },
    { name: 'alice' },
    { name: 'carol' },
    { name: 'dave' },
  ],
});
const janeSigner = readApproverSigner(jane.privateKeyFile);

/**
 * The ledger's contract in memory: one process only, for these specs. The plans `planned` lists have
 * their PLAN entry (as if `plan()` had made them), apart from `entries`.
 */
class FakeLedger implements RedriveLedger {
  readonly entries: RedriveAuditEntry[] = [];
  readonly used = new Map<string, ApprovalUse>();
  readonly held = new Set<string>();
  /** The keyring fingerprint the admin database pins, if any. */
  pinned?: string;
  /** The database time of each APPROVE entry, by the approval's nonce. */
  readonly approvedEntries = new Map<string, Date>();
  constructor(private readonly planned: readonly RedrivePlan[] = knownPlans()) {}
  async pinnedKeyring() {
    return this.pinned;
  }
  async record(entry: RedriveAuditEntry) {
    this.entries.push(entry);
  }
  async approvalRecordedAt(nonce: string) {
    return this.approvedEntries.get(nonce);
  }
  async plannerOf(hash: string) {
    return this.planned.find((p) => p.hash === hash)?.plannedBy;
  }
  async claimApproval(use: ApprovalUse, started?: RedriveAuditEntry) {
    const earlier = this.used.get(use.nonce);
    if (earlier) return { claimed: false as const, usedBy: earlier.executedBy };
    this.used.set(use.nonce, use);
    if (started) this.entries.push(started);
    return { claimed: true as const };
  }
  async withExclusiveHold<T>(_t: string, source: string, work: () => Promise<T>) {
    if (this.held.has(source)) throw new RedriveInProgressError(source);
    this.held.add(source);
    try {
      return await work();
    } finally {
      this.held.delete(source);
    }
  }
  async history() {
    return [];
  }
  async verifyChain() {
    return { intact: true as const, checked: 0 };
  }
  async close() {}
}

/** Never connects: every case here is decided before the broker is reached (nothing listens on port 1). */
function service(
  now: () => Date = () => t0,
  ledger: RedriveLedger = new FakeLedger(),
  principal = 'carol',
  keyring: ApproverKeyring = approvers,
  local = false,
) {
  return new RedriveService({
    broker: { kind: 'rabbitmq', url: 'amqp://127.0.0.1:1', allowPlaintextLocal: local },
    credential: { principal, secret: 's3cret' },
    approvers: keyring,
    ledger,
    clock: { now: () => now().getTime() },
  });
}

function message(index: number): PlannedMessage {
  return {
    position: { kind: 'queue', index },
    messageId: null,
    type: 'OrderPlaced',
    failureCategory: 'TRANSIENT',
    failureCode: 'FLAKY',
    attempts: 1,
    originDestination: 'orders',
    lastFailureAt: null,
    redriveCount: 0,
    previousRedriveIds: [],
    fingerprint: `sha256:${index}`,
  };
}

function plan(count = 0, target = 'orders.billing', edits: Partial<RedrivePlan> = {}): RedrivePlan {
  return sealPlan({
    version: 2,
    transport: 'rabbitmq',
    plannedBy: 'alice',
    source: 'orders.billing.dlq',
    target,
    group: 'billing',
    createdAt: t0.toISOString(),
    depth: count,
    messages: Array.from({ length: count }, (_, i) => message(i)),
    ...edits,
  });
}

/** The plans these specs use, as `plan()` would have recorded them. */
function knownPlans(): RedrivePlan[] {
  return [plan(0), plan(1), plan(2), plan(101), plan(1, 'orders.billing.dlq')];
}

const approvalOf = (p: RedrivePlan, ttlMs?: number): RedriveApproval =>
  signApproval(p, janeSigner, { ttlMs }, t0);

describe(RedriveService.name, () => {
  describe('constructor', () => {
    it('refuses to work without an admin credential, or with a principal holding control characters', () => {
      const ledger = new FakeLedger();
      const build = (credential?: { principal: string; secret: string }) =>
        new RedriveService({ broker: { kind: 'rabbitmq', url: 'amqp://127.0.0.1:1' }, credential, ledger });
      expect(() => build(undefined)).toThrow(MissingAdminCredentialError);
      expect(() => build({ principal: 'ops\u001b[2K', secret: 'x' })).toThrow(MissingAdminCredentialError);
    });

    it('refuses Kafka without SASL unless explicitly local, SASL plain without TLS, and local-only remote brokers', () => {
      const build = (broker: object) =>
        new RedriveService({
          broker: { kind: 'kafka', brokers: ['127.0.0.1:9092'], ...broker },
          credential: { principal: 'ops', secret: 'x' },
          ledger: new FakeLedger(),
        });
      expect(() => build({})).toThrow(InsecureAdminConnectionError);
      expect(() => build({ sasl: 'plain' })).toThrow(InsecureAdminConnectionError);
      expect(() => build({ allowPlaintextLocal: true, brokers: ['kafka.prod:9092'] })).toThrow(
        InsecureAdminConnectionError,
      );
      expect(() => build({ allowPlaintextLocal: true })).not.toThrow();
      expect(() => build({ sasl: 'plain', ssl: true, brokers: ['kafka.prod:9093'] })).not.toThrow();
      expect(() => build({ sasl: 'scram-sha-512', ssl: true, brokers: ['kafka.prod:9092'] })).not.toThrow();
      expect(() => build({ sasl: 'scram-sha-512', brokers: ['kafka.prod:9092'] })).toThrow(
        InsecureAdminConnectionError,
      );
    });
  });

  describe('plan', () => {
    it('refuses 101 messages, a target equal to the source, a forbidden target and a source that is no DLQ', async () => {
      const ledger = new FakeLedger();
      await expect(service(undefined, ledger).plan({ source: 'a.g.dlq', limit: 101 })).rejects.toThrow(
        RedriveBatchTooLargeError,
      );
      await expect(service().plan({ source: 'a.g.dlq', target: 'a.g.dlq' })).rejects.toThrow(
        SameSourceAndTargetError,
      );
      for (const target of ['__consumer_offsets', 'amq.topic', 'a.g.retry.1000ms', 'b.h.dlq', '_schemas']) {
        await expect(service().plan({ source: 'a.g.dlq', target })).rejects.toThrow(
          RedriveTargetRefusedError,
        );
      }
      await expect(service().plan({ source: 'a.g' })).rejects.toThrow(NotADeadLetterSourceError);
      expect(ledger.entries).toMatchObject([{ action: 'REFUSE', outcome: 'BATCH_LIMIT', actor: 'carol' }]);
    });
  });

  describe('approve', () => {
    it('returns an approved plan for a valid approval', async () => {
      const approved = await service().approve(plan(1), approvalOf(plan(1)));
      expect(approved.plan).toEqual(plan(1));
      expect(approved.approval.approver).toBe('jane');
    });

    it('refuses a plan without approval, with an expired one, or with one of another plan, and records it', async () => {
      const later = new Date(t0.getTime() + 16 * 60_000);
      const ledger = new FakeLedger();
      await expect(service(undefined, ledger).approve(plan(1), undefined)).rejects.toThrow(
        ApprovalRequiredError,
      );
      await expect(service(() => later).approve(plan(1), approvalOf(plan(1)))).rejects.toThrow(
        ApprovalExpiredError,
      );
      await expect(service().approve(plan(2), approvalOf(plan(1)))).rejects.toThrow(ApprovalMismatchError);
      expect(ledger.entries).toMatchObject([
        { action: 'REFUSE', outcome: 'APPROVAL', source: 'orders.billing.dlq' },
      ]);
    });

    it('refuses a keyring other than the one the admin database pins, and records it (issue 45)', async () => {
      const ledger = new FakeLedger();
      ledger.pinned = approvers.fingerprint;
      await expect(service(undefined, ledger).approve(plan(1), approvalOf(plan(1)))).resolves.toBeDefined();
      // The executor's own file: one more person is enough to make it another keyring.
      const own = ApproverKeyring.parse({
        version: 2,
        people: [
          { name: 'jane', publicKey: jane.publicKey.publicKey },
          { name: 'alice' },
          { name: 'carol' },
          { name: 'dave' },
          { name: 'mallory' },
        ],
      });
      await expect(
        service(undefined, ledger, 'carol', own).approve(plan(1), approvalOf(plan(1))),
      ).rejects.toThrow(KeyringNotPinnedError);
      expect(ledger.entries).toMatchObject([{ action: 'REFUSE', outcome: 'KEYRING_NOT_PINNED' }]);
    });

    // claim: C-114
    it('refuses an approval dated later than its APPROVE entry in the audit log (issue 45, finding 14)', async () => {
      const month = 30 * 24 * 3_600_000;
      const at = (ms: number) => new Date(t0.getTime() + ms);
      // Signed on a clock a month ahead, recorded (database time) at t0, presented a month later.
      const postDated = signApproval(plan(1), janeSigner, {}, at(month));
      const ledger = new FakeLedger();
      ledger.approvedEntries.set(postDated.nonce, t0);
      await expect(
        service(() => at(month + 60_000), ledger).approve(plan(1), postDated),
      ).rejects.toMatchObject({ mismatch: 'POST_DATED', guard: 'APPROVAL_MISMATCH' });
      // A clock a little ahead (within the skew) is not refused, nor an approval without an APPROVE entry.
      const skewed = signApproval(plan(1), janeSigner, {}, at(30_000));
      ledger.approvedEntries.set(skewed.nonce, t0);
      await expect(service(() => at(60_000), ledger).approve(plan(1), skewed)).resolves.toBeDefined();
      await expect(
        service(() => at(month + 60_000), new FakeLedger()).approve(plan(1), postDated),
      ).resolves.toBeDefined();
    });

    it('refuses the approver as executor (four eyes)', async () => {
      await expect(
        service(undefined, new FakeLedger(), 'jane').approve(plan(1), approvalOf(plan(1))),
      ).rejects.toMatchObject({ mismatch: 'SELF_APPROVAL' });
    });

    it('refuses a plan whose target or group is not what its source derives, naming each difference', async () => {
      const edited = plan(1, 'shipping.work', { group: 'shipping' });
      const ledger = new FakeLedger([edited]);
      const refusal = service(undefined, ledger).approve(edited, approvalOf(edited));
      await expect(refusal).rejects.toThrow(RedrivePlanAlteredError);
      await expect(refusal).rejects.toMatchObject({
        differences: [
          "target: the plan says 'shipping.work', orders.billing.dlq derives 'orders.billing'",
          "group: the plan says 'shipping', the source derives 'billing'",
        ],
      });
      expect(ledger.entries).toMatchObject([{ action: 'REFUSE', outcome: 'PLAN_ALTERED' }]);
    });

    it('takes the planner from the audit log: a plan it does not know, or naming another planner, is refused', async () => {
      const renamed = plan(1, undefined, { plannedBy: 'dave' });
      await expect(service().approve(renamed, approvalOf(renamed))).rejects.toThrow(
        'the audit log has no plan with this hash',
      );
      const claimed = new FakeLedger([{ ...renamed, plannedBy: 'jane' }]);
      await expect(service(undefined, claimed).approve(renamed, approvalOf(renamed))).rejects.toThrow(
        "planner: the plan says 'dave', the audit log 'jane'",
      );
    });

    it('refuses any approval without an identity map, except in local development', async () => {
      const namesOnly = ApproverKeyring.parse({ version: 1, approvers: [jane.publicKey] });
      await expect(
        service(undefined, undefined, 'carol', namesOnly).approve(plan(1), approvalOf(plan(1))),
      ).rejects.toMatchObject({ mismatch: 'NO_IDENTITY_MAP' });
      const local = service(undefined, undefined, 'carol', namesOnly, true);
      await expect(local.approve(plan(1), approvalOf(plan(1)))).resolves.toBeDefined();
    });

    it('refuses an executor the identity map does not know', async () => {
      await expect(
        service(undefined, undefined, 'mallory').approve(plan(1), approvalOf(plan(1))),
      ).rejects.toMatchObject({ mismatch: 'UNMAPPED_ACCOUNT' });
    });

    it('takes the executor a front end names (a console user), and still refuses its credential as approver', async () => {
      const ledger = new FakeLedger();
      await expect(
        service(undefined, ledger).approve(plan(1), approvalOf(plan(1)), 'jane'),
      ).rejects.toMatchObject({
        mismatch: 'SELF_APPROVAL',
      });
      expect(ledger.entries).toMatchObject([{ action: 'REFUSE', actor: 'jane' }]);
      const viaJanesCredential = service(undefined, new FakeLedger(), 'jane');
      await expect(viaJanesCredential.approve(plan(1), approvalOf(plan(1)), 'dave')).rejects.toMatchObject({
        mismatch: 'SELF_APPROVAL',
      });
      await expect(service().approve(plan(1), approvalOf(plan(1)), 'dave')).resolves.toBeDefined();
    });

    it('refuses a plan of 101 messages and one whose target is its source', async () => {
      await expect(service().approve(plan(101), approvalOf(plan(101)))).rejects.toThrow(
        RedriveBatchTooLargeError,
      );
      const looping = plan(1, 'orders.billing.dlq');
      await expect(service().approve(looping, approvalOf(looping))).rejects.toThrow(SameSourceAndTargetError);
    });
  });

  describe('execute', () => {
    it('does not compile with a plain plan, and refuses one at run time', async () => {
      // @ts-expect-error an unapproved plan cannot be executed: plan → approve → execute
      await expect(service().execute(plan(1))).rejects.toThrow(ApprovalRequiredError);
    });

    it('refuses a forged approved plan and one approved by another service', async () => {
      const forged = { plan: plan(1), approval: approvalOf(plan(1)) } as unknown as ApprovedRedrivePlan;
      await expect(service().execute(forged)).rejects.toThrow(ApprovalRequiredError);
      const approved = await service().approve(plan(1), approvalOf(plan(1)));
      await expect(service().execute(approved)).rejects.toThrow(ApprovalRequiredError);
    });

    it('re-checks the expiry at execution', async () => {
      let now = t0;
      const redrive = service(() => now);
      const approved = await redrive.approve(plan(1), approvalOf(plan(1), 1_000));
      now = new Date(t0.getTime() + 1_000);
      await expect(redrive.execute(approved)).rejects.toThrow(ApprovalExpiredError);
    });

    it('runs an approval once, across services sharing a ledger, and records the execution', async () => {
      const ledger = new FakeLedger();
      const approval = approvalOf(plan(0));
      const first = service(undefined, ledger);
      const result = await first.execute(await first.approve(plan(0), approval));
      expect(result).toMatchObject({ redriven: 0, leftInSource: 0, messages: [] });
      expect(result.redriveId).toMatch(/^[0-9a-f-]{36}$/);
      const second = service(undefined, ledger);
      await expect(second.execute(await second.approve(plan(0), approval))).rejects.toThrow(
        ApprovalAlreadyUsedError,
      );
      expect(ledger.entries.map((e) => `${e.action}:${e.outcome}`)).toEqual([
        'EXECUTE:STARTED',
        'EXECUTE:REDRIVEN',
        'REFUSE:APPROVAL_USED',
      ]);
      for (const entry of ledger.entries.slice(0, 2)) {
        expect(entry).toMatchObject({
          approver: 'jane',
          actor: 'carol',
          redriveId: result.redriveId,
          evidence: {
            nonce: approval.nonce,
            signature: approval.signature,
            keyId: approvers.keyIdOf('jane'),
            keyring: approvers.fingerprint,
          },
        });
      }
    });

    it('refuses while another redrive holds the source', async () => {
      const ledger = new FakeLedger();
      ledger.held.add('orders.billing.dlq');
      const redrive = service(undefined, ledger);
      await expect(redrive.execute(await redrive.approve(plan(0), approvalOf(plan(0))))).rejects.toThrow(
        RedriveInProgressError,
      );
      expect(ledger.used.size).toBe(0); // the approval is still unused
    });
  });
});
