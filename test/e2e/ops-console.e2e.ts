import { mkdirSync, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Browser, Page } from 'playwright-core';
import { REPO_ROOT } from '../../tools/demo/build-services';
import { eventually } from '../harness/eventually';
import { TestSchema } from '../harness/postgres';
import { launchChromium } from './support/browser';
import { CONSOLE_DLQ as DLQ, ConsoleStack, startConsoleStack } from './support/console-stack';
import { planFromHead, pressOnPlan } from './support/console-steps';
import { ConsoleUserName, ConsoleUsers, csrfOf, dlqDepthOf } from './support/console-users';

const POISON = 'console e2e: blocked by a trigger';

/** Where the screenshots go: with the test output, git-ignored (`.demo/`). */
const SHOTS = path.join(REPO_ROOT, '.demo', 'e2e', 'console-screenshots');

/**
 * The operations console in headless Chromium, against the services as processes, on each broker (issue 29,
 * 7): on RabbitMQ in a vhost of the suite's own, where the services run as a least-privilege user (no DLQ
 * reads) and only the console holds the admin user; on Kafka on a private broker. A post's notification fails
 * into the DLQ; an operator plans its redrive; an approver approves; the operator executes; the handler
 * applies it once; the audit log shows each step. Viewers, CSRF-less posts, self-approval and a stale plan
 * are refused.
 */
describe.each(['rabbitmq', 'kafka'] as const)(
  'The operations console in a browser (%s, services as processes)',
  (transport) => {
    let console_: ConsoleStack | undefined;
    let subscribeDb: TestSchema | undefined;
    let browser: Browser | undefined;
    const logDir = mkdtempSync(path.join(os.tmpdir(), 'e2e-console-'));
    const shots = path.join(SHOTS, transport);
    let base = '';
    let postId = 0;
    const subscriberId = 7_000 + Math.floor(Math.random() * 1_000);
    const authorId = 17_000 + Math.floor(Math.random() * 1_000);

    beforeAll(async () => {
      mkdirSync(shots, { recursive: true });
      [console_, browser] = await Promise.all([
        startConsoleStack(transport, { prefix: `e2e_console_${transport}`, logDir }),
        launchChromium(),
      ]);
      subscribeDb = console_.subscribeDb;
      base = console_.base;
    });

    afterAll(async () => {
      await browser?.close();
      await console_?.stop();
      process.stdout.write(`\nops console e2e (${transport}): logs in ${logDir}, screenshots in ${shots}\n`);
    });

    const users = new ConsoleUsers({
      browser: () => browser!,
      base: () => base,
      viewport: { width: 1280, height: 800 },
    });
    const signedIn = (name: ConsoleUserName) => users.page(name);

    const shot = (page: Page, name: string) =>
      page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

    const dlqDepth = (page: Page) => dlqDepthOf(page, base, DLQ);

    const notificationsOfPost = async () => {
      const rows = await subscribeDb!.query<{ n: number }>(
        'select count(*)::int as n from notifications where subscriber_id = $1 and post_id = $2',
        [subscriberId, postId],
      );
      return rows[0].n;
    };

    it('shows a message that failed into the DLQ, with payload for an operator only', async () => {
      const [blog, db] = [console_!.blog, subscribeDb!];
      // The cause: a trigger refuses this post's notifications (as a downstream outage would).
      await db.query(`
      create function refuse_poison() returns trigger language plpgsql as $$
      begin
        if new.title = '${POISON}' then raise exception 'notification store refuses this post'; end if;
        return new;
      end $$`);
      await db.query(
        'create trigger refuse_poison before insert on notifications for each row execute function refuse_poison()',
      );
      expect((await blog.client.subscribe(subscriberId, authorId)).status).toBe(201);
      const created = await blog.client.createPost({
        authorId,
        title: POISON,
        content: 'parked, then redriven',
      });
      expect(created.status).toBe(201);
      postId = created.body!.id;

      const alice = await signedIn('alice');
      await eventually(async () => (await dlqDepth(alice)) === 1, 60_000, 500);
      await shot(alice, 'dead-letter-queues');
      // The cause is fixed before the redrive, as the runbook says.
      await db.query('drop trigger refuse_poison on notifications');

      await alice.goto(base);
      await expect(alice.getByRole('heading', { name: 'Outbox, per destination' }).count()).resolves.toBe(1);
      await expect(
        alice.getByRole('cell', { name: 'post-create', exact: true }).count(),
      ).resolves.toBeGreaterThan(0);
      await shot(alice, 'overview');

      await alice.goto(`${base}/dead-letters/${DLQ}`);
      await alice.getByLabel('Type').selectOption('PostCreated');
      await Promise.all([
        alice.waitForURL(/type=PostCreated/),
        alice.getByRole('button', { name: 'Filter' }).click(),
      ]);
      await expect(alice.getByText('1 of the 1 message(s)').count()).resolves.toBe(1);
      await shot(alice, 'dead-letters');
      await alice.locator('table[aria-label="Dead letters"] a').first().click();
      await expect(alice.getByTestId('payload').innerText()).resolves.toContain(POISON);
      await expect(alice.getByRole('cell', { name: 'msg.failure-category' }).count()).resolves.toBe(1);
      await shot(alice, 'dead-letter');

      const victor = await signedIn('victor');
      await victor.goto(alice.url());
      await expect(victor.getByTestId('payload-hidden').count()).resolves.toBe(1);
      await expect(victor.getByTestId('payload').count()).resolves.toBe(0);
      expect(await victor.content()).not.toContain(POISON);
    });

    let planUrl = '';

    it('plans (dry run), is approved by a second person, executes; the handler applies it once', async () => {
      const alice = await signedIn('alice');
      planUrl = await planFromHead(alice, base, DLQ);
      await expect(alice.getByTestId('planned-by').innerText()).resolves.toMatch(/^alice /);
      await expect(alice.getByRole('button', { name: 'Approve this plan' }).count()).resolves.toBe(0);
      await shot(alice, 'redrive-plan');
      // An operator may not approve: not even by posting the form with a valid token.
      const aliceApproves = await alice.request.post(`${planUrl}/approve`, {
        form: { _csrf: await csrfOf(alice) },
      });
      expect(aliceApproves.status()).toBe(403);

      const bob = await signedIn('bob');
      await pressOnPlan(bob, planUrl, 'Approve this plan');
      await expect(bob.getByTestId('approval').innerText()).resolves.toMatch(/^approved by bob/);
      await expect(bob.getByRole('button', { name: 'Execute redrive' }).count()).resolves.toBe(0);
      await shot(bob, 'redrive-approved');

      await pressOnPlan(alice, planUrl, 'Execute redrive');
      const redriveId = await alice.getByTestId('redrive-id').innerText();
      expect(redriveId).toMatch(/^[0-9a-f-]{36}$/);
      await expect(alice.getByTestId('redriven').innerText()).resolves.toBe('1');
      await shot(alice, 'redrive-result');

      await eventually(async () => (await notificationsOfPost()) === 1, 60_000, 250);
      expect(await dlqDepth(alice)).toBe(0);

      await alice.goto(`${base}/audit?source=${DLQ}`);
      const rows = await alice.locator('table[aria-label="Audit log"] tbody tr').allInnerTexts();
      // The demo's console logs in as the database's superuser with `allowRewritableAudit`: each entry says so.
      expect(rows.every((r) => r.includes('(override: rewrite-rights)'))).toBe(true);
      const steps = rows
        .map((r) =>
          r
            .replace(/ \(override: [^)]*\)/, '')
            .split('\t')
            .slice(2, 5)
            .join(' '),
        )
        .reverse();
      expect(steps).toEqual(
        expect.arrayContaining(['PLAN alice PLANNED', 'APPROVE bob APPROVED', 'EXECUTE alice REDRIVEN']),
      );
      expect(rows.join('\n')).toContain(redriveId);
      await shot(alice, 'audit-log');
      // Applied once: the redrive id is in the audit log, the notification is there once.
      expect(await notificationsOfPost()).toBe(1);
    });

    // claim: C-77
    it('refuses a viewer every action (403) and a form post without its CSRF token', async () => {
      const victor = await signedIn('victor');
      await victor.goto(`${base}/redrive`);
      const token = await csrfOf(victor);
      const planId = planUrl.split('/').pop();
      for (const [url, form] of [
        [`${base}/redrive/plans`, { source: DLQ, limit: '1' }],
        [`${base}/redrive/plans/${planId}/approve`, {}],
        [`${base}/redrive/plans/${planId}/execute`, {}],
      ] as const) {
        const answer = await victor.request.post(url, { form: { ...form, _csrf: token } });
        expect({ url, status: answer.status() }).toEqual({ url, status: 403 });
        expect(await answer.text()).toContain('your role may not do this');
      }
      const alice = await signedIn('alice');
      await alice.goto(`${base}/dead-letters/${DLQ}`);
      const noToken = await alice.request.post(`${base}/redrive/plans`, {
        form: { source: DLQ, limit: '1' },
      });
      expect(noToken.status()).toBe(403);
      expect(await noToken.text()).toContain('CSRF');
      const wrongToken = await alice.request.post(`${base}/redrive/plans`, {
        form: { source: DLQ, limit: '1', _csrf: 'x'.repeat(43) },
      });
      expect(wrongToken.status()).toBe(403);
    });

    // claim: C-77
    it('refuses self-approval and a stale plan, with a clear message', async () => {
      const [blog, db] = [console_!.blog, subscribeDb!];
      // Park another message: the trigger again, a second post.
      await db.query(
        'create trigger refuse_poison before insert on notifications for each row execute function refuse_poison()',
      );
      expect((await blog.client.createPost({ authorId, title: POISON, content: 'second' })).status).toBe(201);
      const olga = await signedIn('olga');
      await eventually(async () => (await dlqDepth(olga)) === 1, 60_000, 500);
      await db.query('drop trigger refuse_poison on notifications');

      const plan = (page: Page) => planFromHead(page, base, DLQ);
      const olgasPlan = await plan(olga);
      await olga.getByRole('button', { name: 'Approve this plan' }).click();
      await expect(olga.getByRole('alert').innerText()).resolves.toContain('Four eyes');
      await shot(olga, 'self-approval-refused');

      const alice = await signedIn('alice');
      const alicesPlan = await plan(alice);
      const bob = await signedIn('bob');
      for (const url of [olgasPlan, alicesPlan]) {
        await pressOnPlan(bob, url, 'Approve this plan');
      }
      // Alice's plan runs first; Olga's plan, of the same message, is stale after that.
      await pressOnPlan(alice, alicesPlan, 'Execute redrive');
      await expect(alice.getByTestId('redriven').innerText()).resolves.toBe('1');
      // Olga's plan says it is stale and offers no Execute (issue 29); a post of the form is refused all the same.
      await olga.goto(olgasPlan);
      await expect(olga.getByTestId('plan-state').getAttribute('data-state')).resolves.toBe('stale');
      await expect(olga.getByRole('button', { name: 'Execute redrive' }).count()).resolves.toBe(0);
      const forced = await olga.request.post(`${olgasPlan}/execute`, { form: { _csrf: await csrfOf(olga) } });
      expect(forced.status()).toBe(409);
      await olga.goto(olgasPlan);
      await expect(olga.getByRole('alert').innerText()).resolves.toContain('Stale plan');
      await shot(olga, 'stale-plan-refused');

      await olga.goto(`${base}/audit`);
      const audit = (await olga.locator('table[aria-label="Audit log"]').innerText()).split('\n');
      expect(audit.some((r) => /REFUSE\tolga\tAPPROVAL_MISMATCH/.test(r))).toBe(true);
      expect(audit.some((r) => /REFUSE\tolga\tSTALE_PLAN/.test(r))).toBe(true);
      expect(audit.some((r) => /ACCESS\tvictor\tFORBIDDEN/.test(r))).toBe(true);
      expect(audit.some((r) => /ACCESS\talice\tCSRF_REFUSED/.test(r))).toBe(true);
    });

    // claim: C-78
    it('makes a password guesser wait, and writes no entry per wrong password (issue 28)', async () => {
      const context = await browser!.newContext();
      try {
        const page = await context.newPage();
        const statuses: number[] = [];
        for (let i = 0; i < 7; i++) {
          await page.goto(`${base}/login`);
          await page.getByLabel('User name').fill('nobody');
          await page.getByLabel('Password').fill(`guess-${i}`);
          const [answer] = await Promise.all([
            page.waitForResponse((r) => r.url().endsWith('/login') && r.request().method() === 'POST'),
            page.getByRole('button', { name: 'Sign in' }).click(),
          ]);
          statuses.push(answer.status());
        }
        expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
        await expect(page.getByRole('alert').innerText()).resolves.toMatch(
          /Too many failed sign-ins for this account/,
        );
        await shot(page, 'sign-in-throttled');
      } finally {
        await context.close();
      }
      const victor = await signedIn('victor');
      await victor.goto(`${base}/audit`);
      const audit = await victor.locator('table[aria-label="Audit log"]').innerText();
      expect(audit).not.toContain('nobody');
      expect(audit).toMatch(/ACCESS\t\(hidden from viewers\)\tSIGN_IN_LOCKED/);
      await expect(victor.getByTestId('chain-intact').count()).resolves.toBe(1);
    });
  },
);
