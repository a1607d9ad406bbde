import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Browser, Page } from 'playwright-core';
import { eventually } from '../harness/eventually';
import { parkedOrder } from '../integration/redrive/support/parked-messages';
import { launchChromium } from './support/browser';
import { CONSOLE_DLQ as DLQ, ConsoleStack, startConsoleStack } from './support/console-stack';
import { planFromHead } from './support/console-steps';
import { ConsoleUsers, dlqDepthOf } from './support/console-users';

interface PlanRow {
  id: string;
  plan: { hash: string; plannedBy: string } & Record<string, unknown>;
  approval: { approver: string } | null;
}

/**
 * Issue 45 item 1 (review 2026-12-redrive-console, finding 1), in a browser: the everyday admin database
 * login (the one the console and every CLI user share) writes a markup object (`{"__html": "<form …>"}`)
 * into each column of `messaging_console_plan` it may write, in turn, on the plan an approver is about to
 * approve (UPDATE: refusals, approval, result) or in a plan of its own (INSERT: plan). The unclosed form it
 * plants would own the real Approve button: her click on plan A would post A's CSRF token to plan B's
 * approve URL. Whatever is planted, no form of plan B appears on A's page or on the plans list, the
 * approver's click on A posts to A, and B stays unapproved.
 */
describe('Markup planted in the console plan store (rabbitmq, services as processes)', () => {
  let stack: ConsoleStack | undefined;
  let browser: Browser | undefined;
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'e2e-planted-'));
  const base = () => stack!.base;

  beforeAll(async () => {
    [stack, browser] = await Promise.all([
      startConsoleStack('rabbitmq', { prefix: 'e2e_planted', logDir }),
      launchChromium(),
    ]);
    for (let seq = 1; seq <= 2; seq++) {
      await stack.park(parkedOrder('post-create', 'subscribe-service', seq));
    }
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    process.stdout.write(`\nplanted-markup e2e: logs in ${logDir}\n`);
  });

  const users = new ConsoleUsers({
    browser: () => browser!,
    base,
    viewport: { width: 1280, height: 800 },
  });

  const row = async (id: string): Promise<PlanRow> =>
    (
      await stack!.adminDb.query<PlanRow>(
        'select id::text, plan, approval from messaging_console_plan where id = $1',
        [id],
      )
    )[0];

  const idOf = (url: string) => url.split('/').pop()!;

  /** A form of plan B's approve URL: the unclosed form the attacker plants. */
  const hijack = (b: string) => ({ __html: `<form method=post action=/console/redrive/plans/${b}/approve>` });

  /** How each writable column is planted, given plans A (the approver's) and B (the attacker's). */
  const plants: Record<string, (a: PlanRow, b: string) => Promise<void>> = {
    refusals: async (a, b) => {
      await stack!.adminDb.query('update messaging_console_plan set refusals = $2::jsonb where id = $1', [
        a.id,
        JSON.stringify({ bob: { message: hijack(b), at: '' } }),
      ]);
    },
    approval: async (a, b) => {
      const now = Date.now();
      const approval = {
        version: 2,
        planHash: a.plan.hash,
        approver: hijack(b),
        nonce: 'A'.repeat(22),
        approvedAt: new Date(now).toISOString(),
        expiresAt: new Date(now + 3_600_000).toISOString(),
        signature: 'x',
      };
      await stack!.adminDb.query('update messaging_console_plan set approval = $2::jsonb where id = $1', [
        a.id,
        JSON.stringify(approval),
      ]);
    },
    result: async (a, b) => {
      const result = {
        redriveId: hijack(b),
        source: DLQ,
        target: 'post-create',
        redriven: 0,
        leftInSource: 1,
        messages: [],
      };
      await stack!.adminDb.query(
        'update messaging_console_plan set result = $2::jsonb, executed_at = now() where id = $1',
        [a.id, JSON.stringify(result)],
      );
    },
    // The plan column (and source, planned_by, plan_hash with it) cannot be updated (a trigger): a row of
    // its own, a copy of A's plan with the markup for a planner, shown on the plans list to everyone.
    plan: async (a, b) => {
      await stack!.adminDb.query(
        `insert into messaging_console_plan (id, source, planned_by, plan_hash, plan)
         values ($1, $2, $3, $4, $5::jsonb)`,
        [randomUUID(), DLQ, 'alice', a.plan.hash, JSON.stringify({ ...a.plan, plannedBy: hijack(b) })],
      );
    },
  };

  /** The actions of every form on the page (their `action` attribute, as the browser resolved it). */
  const formActions = (page: Page) =>
    page
      .locator('form')
      .evaluateAll((forms) => forms.map((f) => (f as unknown as { action: string }).action));

  /** The form each button belongs to, as the browser parsed the page (where a click posts). */
  const buttonTargets = (page: Page) =>
    page
      .locator('button')
      .evaluateAll((buttons) =>
        buttons.map((b) => (b as unknown as { form: { action: string } | null }).form?.action ?? null),
      );

  it.each(Object.keys(plants))(
    'markup planted in the %s column: the approver’s click posts to her own plan, B stays unapproved',
    async (column) => {
      const alice = await users.page('alice');
      await eventually(async () => (await dlqDepthOf(alice, base(), DLQ)) === 2, 60_000, 500);
      const aUrl = await planFromHead(alice, base(), DLQ, 1);
      const bUrl = await planFromHead(alice, base(), DLQ, 2);
      await alice.close();
      const [a, b] = [await row(idOf(aUrl)), idOf(bUrl)];
      await plants[column](a, b);

      const bob = await users.page('bob');
      await bob.goto(`${base()}/redrive`);
      for (const action of await formActions(bob)) expect(action).not.toContain(b);
      await bob.goto(aUrl);
      for (const action of await formActions(bob)) expect(action).not.toContain(b);
      for (const target of await buttonTargets(bob)) expect(target ?? '').not.toContain(b);

      const approve = bob.getByRole('button', { name: 'Approve this plan' });
      if ((await approve.count()) > 0) {
        const [request] = await Promise.all([
          bob.waitForRequest((r) => r.method() === 'POST'),
          approve.click(),
        ]);
        expect(request.url()).toBe(`${aUrl}/approve`);
        await bob.waitForLoadState();
        // Planted in a column the approval does not depend on: the approval of A is given.
        if (column === 'refusals') expect((await row(a.id)).approval?.approver).toBe('bob');
      }
      expect((await row(b)).approval).toBeNull();
      await bob.close();
    },
  );
});
