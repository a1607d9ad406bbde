import { Logger } from '@nestjs/common';
import { FakeResponse } from '../../spec-support/console-fakes';
import { bob, consoleHarness as console, csrfOf, DLQ, planOf } from '../../spec-support/console-harness';
import { generateApproverKeys, readApproverSigner } from '../redrive/approvals/approver-keys';
import { ApprovalExpiredError } from '../redrive/errors/approval-expired.error';
import { AuditLogRewritableError } from '../redrive/errors/audit-log-rewritable.error';
import { RedrivePlanStaleError } from '../redrive/errors/redrive-plan-stale.error';
import { ConsoleController } from './console.controller';
import { MemoryConsolePlanStore } from './plans/memory-console-plan-store';

const NOW = new Date('2026-12-03T10:00:00.000Z');

/** A plan of the head of the DLQ, made a minute before `NOW`, approved by bob until `approvedUntil`. */
async function storedPlan(store: MemoryConsolePlanStore, approvedUntil?: string) {
  const plan = planOf(DLQ, 'alice', { hash: 'sha256:plan' });
  const entry = await store.add(plan);
  if (approvedUntil) {
    await store.approved(
      entry.id,
      {
        version: 2,
        planHash: plan.hash,
        approver: 'bob',
        nonce: 'n',
        approvedAt: '2026-12-03T09:59:30.000Z',
        expiresAt: approvedUntil,
        signature: 's',
      },
      'bob',
    );
  }
  return entry.id;
}

describe(ConsoleController.name, () => {
  beforeEach(() => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  describe('onApplicationBootstrap', () => {
    // Issue 45 finding 13: a login that can rewrite the audit log stops the console, unless overridden.
    const ledgerWith = (rights: string[]) => {
      const asked: boolean[] = [];
      const requireAppendOnly = async (allow: boolean) => {
        asked.push(allow);
        if (rights.length > 0 && !allow) throw new AuditLogRewritableError(rights);
        return rights;
      };
      return { asked, ledger: { requireAppendOnly } };
    };

    it('refuses to start when the database login could rewrite the audit log', async () => {
      const owner = console();
      const { asked, ledger } = ledgerWith(['owner of messaging_redrive_audit']);
      Object.assign(owner.options.ledger, ledger);
      await expect(owner.controller.onApplicationBootstrap()).rejects.toThrow(AuditLogRewritableError);
      expect(asked).toEqual([false]);
    });

    it('starts with allowRewritableAudit, logging the override as an error; quietly on the recipe', async () => {
      const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const owner = console({ allowRewritableAudit: true });
      const rights = ledgerWith(['owner of messaging_redrive_audit']);
      Object.assign(owner.options.ledger, rights.ledger);
      await owner.controller.onApplicationBootstrap();
      expect(rights.asked).toEqual([true]);
      expect(error).toHaveBeenCalledWith(expect.stringContaining('OVERRIDE'));
      expect(error).toHaveBeenCalledWith(expect.stringContaining('(owner of messaging_redrive_audit)'));
      error.mockClear();
      const recipe = console();
      Object.assign(recipe.options.ledger, ledgerWith([]).ledger);
      await recipe.controller.onApplicationBootstrap();
      expect(error).not.toHaveBeenCalled();
    });
  });

  describe('deadLetter', () => {
    it('reads the one message at its position, and shows the start of its payload', async () => {
      const { controller, redrive, as } = console();
      const alice = await as('alice');
      const res = new FakeResponse();
      await controller.deadLetter(alice({ params: { queue: DLQ, id: 'm-1' }, query: { at: 'q0' } }), res);
      expect(res.statusCode).toBe(200);
      expect(redrive.inspectCalls).toBe(0);
      expect(redrive.inspectMessageCalls).toEqual([[DLQ, { kind: 'queue', index: 0 }, 'm-1', 1024]]);
      expect(res.body).toContain('The first 1024 of 204800 bytes; the rest is not shown');
      expect(res.body.length).toBeLessThan(20 * 1024);
    });

    it('sends the payload as a file to download, audited, and never to a viewer', async () => {
      const { files, redrive, recorded, as } = console();
      const alice = await as('alice');
      const res = new FakeResponse();
      await files.payload(alice({ params: { queue: DLQ, id: 'm-1' }, query: { at: 'q0' } }), res);
      expect(res.statusCode).toBe(200);
      expect(res.getHeader('content-disposition')).toBe('attachment; filename="m-1.txt"');
      expect(res.getHeader('content-security-policy')).toBe("default-src 'none'; sandbox");
      expect(res.body).toHaveLength(1024); // the fake's payload; the download asks for up to 8 MiB
      expect(redrive.inspectMessageCalls.at(-1)?.[3]).toBe(8 * 1024 * 1024);
      expect(recorded.at(-1)).toMatchObject({ actor: 'alice', outcome: 'PAYLOAD_DOWNLOADED', source: DLQ });
      const viewer = new FakeResponse();
      await files.payload(
        (await as('victor'))({ params: { queue: DLQ, id: 'm-1' }, query: { at: 'q0' } }),
        viewer,
      );
      expect(viewer.statusCode).toBe(403);
      expect(viewer.body).not.toContain('xxxx');
    });

    it('answers 404 for a message no longer at its position, and for a link without one', async () => {
      const { controller, as } = console();
      const alice = await as('alice');
      for (const query of [{ at: 'q1' }, {}, { at: 'p0-1' }, { at: 'q0;drop' }] as Array<
        Record<string, string>
      >) {
        const res = new FakeResponse();
        await controller.deadLetter(alice({ params: { queue: DLQ, id: 'm-1' }, query }), res);
        expect(res.statusCode).toBe(404);
      }
    });

    it('links each message of the queue page with its position', async () => {
      const { controller, as } = console();
      const res = new FakeResponse();
      await controller.deadLetterQueue((await as('alice'))({ params: { queue: DLQ } }), res);
      expect(res.body).toContain(`/console/dead-letters/${DLQ}/messages/m-1?at=q0`);
    });
  });

  describe('overview and dead-letters', () => {
    // claim: C-81
    it('never shows the broker’s own error text: a reference into the console’s log instead', async () => {
      const { controller, redrive, as } = console();
      redrive.listError = new Error('connect ECONNREFUSED 10.1.2.3:5672 as ops_admin on vhost orders');
      const victor = await as('victor');
      for (const page of [controller.overview, controller.deadLetterQueues]) {
        const res = new FakeResponse();
        await page.call(controller, victor(), res);
        expect(res.body).not.toContain('10.1.2.3');
        expect(res.body).not.toContain('ops_admin');
        expect(res.body).toMatch(
          /The broker could not be read \(reference [0-9a-f]{8}: the console’s log has the details\)/,
        );
      }
    });
  });

  describe('audit', () => {
    it('hides what was typed as a name in sign-in entries from viewers', async () => {
      const { controller, entries, as } = console();
      entries.push({
        id: '1',
        at: new Date(0),
        action: 'ACCESS',
        actor: 'hunter2-typed-as-name',
        transport: 'rabbitmq',
        outcome: 'SIGN_IN_FAILED',
        detail: 'wrong name or password',
      });
      const viewer = new FakeResponse();
      await controller.audit((await as('victor'))(), viewer);
      expect(viewer.body).not.toContain('hunter2');
      expect(viewer.body).toContain('(hidden from viewers)');
      const operator = new FakeResponse();
      await controller.audit((await as('alice'))(), operator);
      expect(operator.body).toContain('hunter2-typed-as-name');
      // Nor can a viewer try names with the actor filter: such entries are left out of its matches.
      const probing = new FakeResponse();
      await controller.audit((await as('victor'))({ query: { actor: 'hunter2-typed-as-name' } }), probing);
      expect(probing.body).not.toContain('(hidden from viewers)');
    });

    it('asks the ledger for one page of what the filter names, and links the older page', async () => {
      const { controller, entries, historyCalls, as } = console();
      for (let n = 1; n <= 120; n++) {
        entries.push({
          id: String(n),
          at: new Date(n * 1000),
          action: 'PLAN',
          actor: 'alice',
          transport: 'rabbitmq',
          outcome: 'PLANNED',
        });
      }
      const res = new FakeResponse();
      const query = {
        actor: 'alice',
        action: 'PLAN',
        from: '2026-12-03T07:00',
        to: 'yesterday',
        source: DLQ,
      };
      await controller.audit((await as('alice'))({ query }), res);
      expect(historyCalls).toEqual([
        {
          source: DLQ,
          actor: 'alice',
          action: 'PLAN',
          from: new Date('2026-12-03T07:00:00.000Z'),
          to: undefined,
          before: undefined,
          after: undefined,
          limit: 51,
        },
      ]);
      const rows = res.body.match(/<tr>\s*<td>\d+<\/td>/g) ?? [];
      expect(rows).toHaveLength(50);
      expect(res.body).toContain(
        '/console/audit?source=orders.billing.dlq&amp;actor=alice&amp;action=PLAN&amp;from=2026-12-03T07%3A00&amp;before=71',
      );
      expect(res.body).not.toContain('Newer entries');
      expect(res.body).toContain('value="2026-12-03T07:00"');
      expect(res.body).not.toContain('yesterday'); // a time that does not parse is left out, not echoed
    });
  });

  describe('plans', () => {
    async function setUp(approvedUntil?: string) {
      const clock = { now: () => NOW.getTime() };
      const planStore = new MemoryConsolePlanStore(clock);
      const id = await storedPlan(planStore, approvedUntil);
      const made = console({ planStore, clock });
      type Who = Awaited<ReturnType<(typeof made)['as']>>;
      const page = async (who: Who) => {
        const res = new FakeResponse();
        await made.controller.planPage(who({ params: { id } }), res);
        return res;
      };
      const execute = async (who: Who) => {
        const csrf = csrfOf((await page(who)).body);
        const res = new FakeResponse();
        await made.controller.execute(who({ params: { id } }, { _csrf: csrf }), res);
        return res;
      };
      return { ...made, id, page, execute };
    }

    it('shows a refusal to the person it refused only, not to the next visitor', async () => {
      const { redrive, as, page, execute } = await setUp('2026-12-03T10:15:00.000Z');
      redrive.approveError = new ApprovalExpiredError('2026-12-03T09:00:00.000Z', NOW.toISOString());
      const alice = await as('alice');
      const olga = await as('olga');
      const refused = await execute(alice);
      expect(refused.statusCode).toBe(409);
      expect(refused.body).toContain('Refused (APPROVAL_EXPIRED)');
      expect((await page(alice)).body).toContain('Refused (APPROVAL_EXPIRED)');
      const next = (await page(olga)).body;
      expect(next).not.toContain('APPROVAL_EXPIRED');
      expect(next).toContain('Execute redrive'); // the plan itself is still approved: olga may try
    });

    it('says a stale plan is stale and offers no Execute, to everyone, and executes nothing', async () => {
      const { redrive, as, page, execute } = await setUp('2026-12-03T10:15:00.000Z');
      redrive.approveError = new RedrivePlanStaleError(
        DLQ,
        'the message at position 0 is not the planned one',
      );
      const alice = await as('alice');
      expect((await execute(alice)).body).toContain('Stale plan');
      const olga = await as('olga');
      const seen = (await page(olga)).body;
      expect(seen).toContain('data-state="stale"');
      expect(seen).not.toContain('Execute redrive');
      expect(redrive.approveCalls).toBe(1);
      const again = await execute(olga);
      expect(again.statusCode).toBe(409);
      expect(again.body).toContain('Stale plan');
      expect(redrive.approveCalls).toBe(1); // refused by the console, before the redrive service
    });

    it('says an approval ran out and offers no Execute; a post is refused before the redrive service', async () => {
      const { redrive, as, page, execute } = await setUp('2026-12-03T09:59:59.000Z');
      const alice = await as('alice');
      const seen = (await page(alice)).body;
      expect(seen).toContain('data-state="expired"');
      expect(seen).toContain('its approval by bob ran out at 2026-12-03T09:59:59.000Z');
      expect(seen).not.toContain('Execute redrive');
      const refused = await execute(alice);
      expect(refused.statusCode).toBe(409);
      expect(refused.body).toContain('Expired plan');
      expect(redrive.approveCalls).toBe(0);
    });
  });

  describe('constructor', () => {
    it('refuses to start with an approver key the reviewed keyring does not hold, or holds another key for', () => {
      const mallory = readApproverSigner(generateApproverKeys('mallory').privateKeyFile);
      expect(() => console({ approverSigners: [mallory] })).toThrow(
        "the approver key of 'mallory' is not in the reviewed keyring",
      );
      const otherBob = readApproverSigner(generateApproverKeys('bob').privateKeyFile);
      expect(() => console({ approverSigners: [otherBob] })).toThrow('does not match the public key');
      expect(() => console({ approverSigners: [readApproverSigner(bob.privateKeyFile)] })).not.toThrow();
    });
  });
});
