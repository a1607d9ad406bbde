import { z } from 'zod';
import { FakeDeadLetters, parkedLetter } from '../../spec-support/fake-dead-letters';
import { defineEvent } from '../envelope/event-definition';
import { ApproverKeyring } from './approvals/approver-keyring';
import { generateApproverKeys, readApproverSigner } from './approvals/approver-keys';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import { fingerprintOf } from './dead-letter-record';
import { ApprovalMismatchError } from './errors/approval-mismatch.error';
import { EditAlreadyClaimedError } from './errors/edit-already-claimed.error';
import { MessageEditRefusedError } from './errors/message-edit-refused.error';
import { RedriveInProgressError } from './errors/redrive-in-progress.error';
import { RedrivePlanAlteredError } from './errors/redrive-plan-altered.error';
import { RedrivePlanStaleError } from './errors/redrive-plan-stale.error';
import { issueApproval } from './issue-approval';
import { ApprovalUse, RedriveAuditEntry, RedriveLedger } from './ledger/redrive-ledger.interface';
import { signApproval } from './redrive-approval';
import { RedrivePlan, sealPlan } from './redrive-plan';
import { RedriveService } from './redrive.service';

let backend: DeadLetterBackend;
jest.mock('./dead-letter-backends', () => ({ createDeadLetterBackend: () => backend }));

const t0 = new Date('2026-01-01T10:00:00.000Z');
const jane = generateApproverKeys('jane');
const janeSigner = readApproverSigner(jane.privateKeyFile);
const approvers = ApproverKeyring.parse({
  version: 2,
  people: [{ name: 'jane', publicKey: jane.publicKey.publicKey }, { name: 'alice' }, { name: 'carol' }],
});
const OrderPlaced = defineEvent({
  type: 'OrderPlaced',
  destination: 'orders',
  schema: z.object({ orderId: z.number().int(), amount: z.number().positive() }),
  key: (p) => p.orderId,
});

/** The ledger's contract in memory: PLAN entries name planners; nonces and claims are taken once. */
class MemoryLedger implements RedriveLedger {
  readonly entries: RedriveAuditEntry[] = [];
  readonly tokens = new Map<string, string>();
  private readonly held = new Set<string>();
  async record(entry: RedriveAuditEntry) {
    this.entries.push(entry);
  }
  async plannerOf(hash: string) {
    return this.entries.find((e) => e.action === 'PLAN' && e.outcome === 'PLANNED' && e.planHash === hash)
      ?.actor;
  }
  async claimApproval(use: ApprovalUse, started?: RedriveAuditEntry) {
    if (this.tokens.has(use.nonce))
      return { claimed: false as const, usedBy: 'earlier', taken: 'nonce' as const };
    const claim = (use.claims ?? []).find((c) => this.tokens.has(c));
    if (claim)
      return { claimed: false as const, usedBy: this.tokens.get(claim) as string, taken: 'claim' as const };
    for (const token of [use.nonce, ...(use.claims ?? [])]) this.tokens.set(token, use.executedBy);
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

const DLQ = 'orders.billing.dlq';
const ID = '0190a6c4-8f4e-7a3b-9c1d-2e3f4a5b6c7d';

function setUp(letters = [parkedLetter(ID, { orderId: 7, amount: -5 }, { tenant: 'acme' })]) {
  const dead = new FakeDeadLetters(letters);
  backend = dead;
  const ledger = new MemoryLedger();
  const service = new RedriveService({
    broker: { kind: 'rabbitmq', url: 'amqp://127.0.0.1:1' },
    credential: { principal: 'carol', secret: 's3cret' },
    approvers,
    ledger,
    events: [OrderPlaced],
    carryHeaders: ['tenant'],
    clock: { now: () => t0.getTime() },
  });
  return { dead, ledger, service };
}

const editOf = (payload: unknown, extra: Record<string, unknown> = {}) => ({
  source: DLQ,
  position: { kind: 'queue' as const, index: 0 },
  messageId: ID,
  payload: JSON.stringify(payload),
  plannedBy: 'alice',
  ...extra,
});

const approve = (service: RedriveService, plan: RedrivePlan) =>
  service.approve(plan, signApproval(plan, janeSigner, {}, t0));

describe(RedriveService.name, () => {
  describe('planEdit', () => {
    it('plans the edit with its diff, validated by the schema, and records the diff hash', async () => {
      const { ledger, service } = setUp();
      const plan = await service.planEdit(
        editOf({ orderId: 7, amount: 5 }, { headers: { tenant: 'globex' } }),
      );
      expect(plan).toMatchObject({
        action: 'edit',
        plannedBy: 'alice',
        target: 'orders.billing',
        messages: [{ messageId: ID }],
      });
      expect(plan.edit).toMatchObject({
        messageId: ID,
        payload: '{"orderId":7,"amount":5}',
        headers: { tenant: 'globex' },
        validated: 'schema',
        diff: [
          { path: '/amount', op: 'replace', before: '-5', after: '5' },
          { path: 'header:tenant', op: 'replace', before: 'acme', after: 'globex' },
        ],
      });
      const [entry] = ledger.entries;
      expect(entry).toMatchObject({
        action: 'PLAN',
        outcome: 'PLANNED',
        actor: 'alice',
        planHash: plan.hash,
      });
      expect(entry.detail).toContain(plan.edit?.diffHash);
      expect(entry.detail).not.toContain('globex'); // the audit log keeps the hash, not the values
    });

    it.each([
      ['msg.id', 'LOCKED_HEADER'],
      ['msg.key', 'LOCKED_HEADER'],
      ['traceparent', 'LOCKED_HEADER'],
      ['msg.redrive-id', 'LOCKED_HEADER'],
      ['msg.failure-code', 'LOCKED_HEADER'],
      ['authorization', 'LOCKED_HEADER'],
    ])('refuses a change of %s (%s), and records the refusal', async (header, reason) => {
      const { ledger, service } = setUp();
      const refused = service.planEdit(editOf({ orderId: 7, amount: 5 }, { headers: { [header]: 'x' } }));
      await expect(refused).rejects.toMatchObject({ guard: 'EDIT_REFUSED', reason });
      expect(ledger.entries).toEqual([
        expect.objectContaining({ action: 'REFUSE', outcome: 'EDIT_REFUSED' }),
      ]);
    });

    it('refuses a payload the schema refuses, one that is not JSON, and one that changes nothing', async () => {
      const { service } = setUp();
      await expect(service.planEdit(editOf({ orderId: 7, amount: 0 }))).rejects.toMatchObject({
        reason: 'SCHEMA',
      });
      await expect(service.planEdit({ ...editOf({}), payload: '{oops' })).rejects.toMatchObject({
        reason: 'NOT_JSON',
      });
      // The schema first: a payload left as it failed is refused by it (here it was never valid).
      await expect(service.planEdit(editOf({ orderId: 7, amount: -5 }))).rejects.toMatchObject({
        reason: 'SCHEMA',
      });
      const unknown = setUp([parkedLetter(ID, { a: 1 }, { 'msg.type': 'Unknown' })]).service;
      await expect(unknown.planEdit(editOf({ a: 1 }, { withoutSchema: true }))).rejects.toMatchObject({
        reason: 'NO_CHANGE',
      });
    });

    it('without a definition of the type: refused, unless planned unvalidated on purpose', async () => {
      const { service } = setUp([parkedLetter(ID, { a: 1 }, { 'msg.type': 'Unknown' })]);
      await expect(service.planEdit(editOf({ a: 2 }))).rejects.toMatchObject({ reason: 'NO_SCHEMA' });
      const plan = await service.planEdit(editOf({ a: 2 }, { withoutSchema: true }));
      expect(plan.edit?.validated).toBe('none');
    });

    it('refuses when another message sits at the position now', async () => {
      const { service } = setUp();
      await expect(
        service.planEdit({ ...editOf({ orderId: 7, amount: 5 }), messageId: 'other' }),
      ).rejects.toThrow(RedrivePlanStaleError);
    });
  });

  describe('an edit plan, approved and executed', () => {
    it('publishes the edited copy under the same id with msg.edit-of, archives the original first', async () => {
      const { dead, ledger, service } = setUp();
      const original = dead.queue[0];
      const plan = await service.planEdit(
        editOf({ orderId: 7, amount: 5 }, { headers: { tenant: 'globex' } }),
      );
      const result = await service.execute(await approve(service, plan));
      expect(result).toMatchObject({
        action: 'edit',
        redriven: 1,
        leftInSource: 0,
        target: 'orders.billing',
      });
      expect(dead.queue).toEqual([]);
      const [archived, edited] = dead.published;
      expect(archived).toMatchObject({ destination: `${DLQ}.archive`, body: original.body });
      expect(archived.headers['msg.archive-id']).toBe(result.redriveId);
      expect(edited.destination).toBe('orders.billing');
      expect(JSON.parse(edited.body.toString())).toEqual({ orderId: 7, amount: 5 });
      expect(edited.headers).toMatchObject({
        'msg.id': ID,
        'msg.type': 'OrderPlaced',
        traceparent: original.headers.traceparent,
        tenant: 'globex',
        'msg.edit-of': fingerprintOf(original),
        'msg.redrive-id': result.redriveId,
        'msg.redrive-group': 'billing',
      });
      expect(edited.headers['msg.failure-code']).toBeUndefined();
      const executed = ledger.entries.filter((e) => e.action === 'EXECUTE');
      expect(executed.map((e) => e.outcome)).toEqual(['STARTED', 'EDITED']);
      expect(executed[1].detail).toContain(plan.edit?.diffHash);
    });

    it('the editor cannot approve their own edit', async () => {
      const { ledger, service } = setUp();
      const plan = await service.planEdit(editOf({ orderId: 7, amount: 5 }, { plannedBy: 'jane' }));
      await expect(issueApproval(plan, janeSigner, { ledger, keyring: approvers })).rejects.toMatchObject({
        mismatch: 'SELF_APPROVAL',
      });
    });

    it('refuses a changed diff at approval and at execution (the plan store holds it as written)', async () => {
      const { dead, ledger, service } = setUp();
      const plan = await service.planEdit(editOf({ orderId: 7, amount: 5 }));
      const edit = plan.edit as NonNullable<RedrivePlan['edit']>;
      // Another payload, the signed diff kept: the hash no longer matches.
      const payloadSwapped = { ...plan, edit: { ...edit, payload: '{"orderId":7,"amount":5000}' } };
      await expect(
        issueApproval(payloadSwapped, janeSigner, { ledger, keyring: approvers }),
      ).rejects.toMatchObject({
        mismatch: 'PLAN_EDITED',
      });
      // Resealed by whoever wrote the store: the audit log has no such plan.
      const resealed = sealPlan({ ...payloadSwapped, hash: undefined } as never);
      await expect(issueApproval(resealed, janeSigner, { ledger, keyring: approvers })).rejects.toThrow(
        RedrivePlanAlteredError,
      );
      // A planted diff hash that is not the diff's, even with a PLAN entry of its own.
      const planted = sealPlan({
        ...plan,
        edit: { ...edit, diffHash: 'sha256:0' },
        hash: undefined,
      } as never);
      ledger.entries.push({
        action: 'PLAN',
        actor: 'alice',
        transport: 'rabbitmq',
        planHash: planted.hash,
        outcome: 'PLANNED',
      });
      await expect(approve(service, planted)).rejects.toThrow(RedrivePlanAlteredError);
      // A payload whose diff was rewritten to match, hash and PLAN entry made: execution reads the message
      // again and refuses what the signed diff does not say.
      const diff = [{ path: '/amount', op: 'replace' as const, before: '-5', after: '5' }];
      const lying = sealPlan({
        ...plan,
        edit: { ...edit, payload: '{"orderId":8,"amount":5}', diff, diffHash: edit.diffHash },
        hash: undefined,
      } as never);
      ledger.entries.push({
        action: 'PLAN',
        actor: 'alice',
        transport: 'rabbitmq',
        planHash: lying.hash,
        outcome: 'PLANNED',
      });
      await expect(service.execute(await approve(service, lying))).rejects.toThrow(RedrivePlanAlteredError);
      expect(dead.published).toEqual([]);
      expect(dead.queue).toHaveLength(1);
    });

    it('refuses a plan whose edit changes a locked header, however it got into the plan', async () => {
      const { ledger, service } = setUp();
      const plan = await service.planEdit(editOf({ orderId: 7, amount: 5 }));
      const edit = plan.edit as NonNullable<RedrivePlan['edit']>;
      const planted = sealPlan({
        ...plan,
        edit: { ...edit, headers: { 'msg.id': 'x' } },
        hash: undefined,
      } as never);
      ledger.entries.push({
        action: 'PLAN',
        actor: 'alice',
        transport: 'rabbitmq',
        planHash: planted.hash,
        outcome: 'PLANNED',
      });
      await expect(approve(service, planted)).rejects.toThrow(MessageEditRefusedError);
    });

    it('one edit per dead letter: a second edit of it, approved too, is refused and moves nothing', async () => {
      const { dead, service } = setUp();
      const first = await service.planEdit(editOf({ orderId: 7, amount: 5 }));
      const second = await service.planEdit(editOf({ orderId: 7, amount: 6 }));
      const [a, b] = [await approve(service, first), await approve(service, second)];
      await service.execute(a);
      // Put the original back, as a duplicate parked again would be: the claim still refuses the second.
      dead.queue.push(parkedLetter(ID, { orderId: 7, amount: -5 }, { tenant: 'acme' }));
      await expect(service.execute(b)).rejects.toThrow(EditAlreadyClaimedError);
      expect(dead.published).toHaveLength(2);
    });
  });

  it('plan() takes no edit action from a caller without types', async () => {
    const { service } = setUp();
    await expect(service.plan({ source: DLQ, action: 'edit' as never })).rejects.toThrow(TypeError);
    expect(ApprovalMismatchError).toBeDefined();
  });
});
