import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RedrivePlan, sealPlan } from 'nest-reliable-messaging/redrive';
import { Browser, Page } from 'playwright-core';
import { REPO_ROOT } from '../../tools/demo/build-services';
import { eventually } from '../harness/eventually';
import { launchChromium } from './support/browser';
import { CONSOLE_DLQ as DLQ, ConsoleStack, startConsoleStack } from './support/console-stack';
import { pressOnPlan } from './support/console-steps';
import { ConsoleUserName, ConsoleUsers, csrfOf, dlqDepthOf } from './support/console-users';

const POISON = 'edit e2e: refused by a trigger';
const FIXED = 'edit e2e: the title fixed';

/**
 * Issue 40 item 1 in Chromium, on RabbitMQ with the services as processes: a post's notification fails into
 * the DLQ (a trigger refuses its title); an operator edits the dead letter's title in the console. Locked
 * headers and a payload the schema refuses are refused; the editor cannot approve their own edit; a diff
 * changed in the plan store (the everyday database login can write it) is refused at approval, and at
 * execution; approved by a second person, the edit runs: the handler applies the edited payload once, the
 * original is archived; a second edit of the same dead letter is refused.
 */
describe('Edit and retry in the console (rabbitmq, services as processes)', () => {
  let stack: ConsoleStack | undefined;
  let browser: Browser | undefined;
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'e2e-edit-'));
  const shots = path.join(REPO_ROOT, '.demo', 'e2e', 'console-edit');
  const base = () => stack!.base;
  const subscriberId = 9_000 + Math.floor(Math.random() * 1_000);
  const authorId = 19_000 + Math.floor(Math.random() * 1_000);
  let postId = 0;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    [stack, browser] = await Promise.all([
      startConsoleStack('rabbitmq', { prefix: 'e2e_edit', logDir }),
      launchChromium(),
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    process.stdout.write(`\nconsole edit e2e: logs in ${logDir}, screenshots in ${shots}\n`);
  });

  const users = new ConsoleUsers({ browser: () => browser!, base, viewport: { width: 1280, height: 800 } });
  const signedIn = (name: ConsoleUserName) => users.page(name);
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

  const notifications = () =>
    stack!.subscribeDb.query<{ title: string }>(
      'select title from notifications where subscriber_id = $1 and post_id = $2',
      [subscriberId, postId],
    );

  /** The plan row as the console's store holds it. */
  const planRow = async (id: string) =>
    (
      await stack!.adminDb.query<{ plan: RedrivePlan; approval: unknown }>(
        'select plan, approval from messaging_console_plan where id = $1',
        [id],
      )
    )[0];

  /**
   * A row of its own in the plan store, as the everyday database login can insert one (the plan column of a
   * row is written once: a trigger); its URL.
   */
  const insertPlan = async (plan: RedrivePlan, approval: unknown = null) => {
    const id = randomUUID();
    await stack!.adminDb.query(
      `insert into messaging_console_plan (id, source, planned_by, plan_hash, plan, approval)
       values ($1, $2, $3, $4, $5::jsonb, $6::jsonb)`,
      [id, plan.source, plan.plannedBy, plan.hash, JSON.stringify(plan), JSON.stringify(approval)],
    );
    return `${base()}/redrive/plans/${id}`;
  };

  /** The plan with another edited payload, resealed: its hash is right, the audit log has no such plan. */
  const planted = (plan: RedrivePlan): RedrivePlan => {
    const edit = plan.edit!;
    const payload = { ...(JSON.parse(edit.payload) as object), title: 'planted title' };
    const { hash: _hash, ...content } = { ...plan, edit: { ...edit, payload: JSON.stringify(payload) } };
    return sealPlan(content);
  };

  /** Opens the dead letter from its queue's page and submits the edit form; the page after the post. */
  async function submitEdit(page: Page, change: (payload: Record<string, unknown>) => unknown, headers = '') {
    await page.goto(`${base()}/dead-letters/${DLQ}`);
    await page.locator('table[aria-label="Dead letters"] a').first().click();
    const text = await page.getByLabel('Edited payload (JSON)').inputValue();
    await page
      .getByLabel('Edited payload (JSON)')
      .fill(JSON.stringify(change(JSON.parse(text) as Record<string, unknown>)));
    await page.getByLabel('Header changes').fill(headers);
    await Promise.all([
      page.waitForURL(/\/edit\?|\/redrive\/plans\//),
      page.getByRole('button', { name: 'Plan edit' }).click(),
    ]);
  }

  let olgasPlan = '';
  let alicesPlan = '';

  it('refuses locked headers and a payload the schema refuses; plans an edit whose diff the page shows', async () => {
    const db = stack!.subscribeDb;
    await db.query(`
      create function refuse_poison() returns trigger language plpgsql as $$
      begin
        if new.title = '${POISON}' then raise exception 'notification store refuses this post'; end if;
        return new;
      end $$`);
    await db.query(
      'create trigger refuse_poison before insert on notifications for each row execute function refuse_poison()',
    );
    expect((await stack!.blog.client.subscribe(subscriberId, authorId)).status).toBe(201);
    const created = await stack!.blog.client.createPost({ authorId, title: POISON, content: 'to be edited' });
    postId = created.body!.id;
    const olga = await signedIn('olga');
    await eventually(async () => (await dlqDepthOf(olga, base(), DLQ)) === 1, 60_000, 500);

    await submitEdit(olga, (p) => ({ ...p, title: FIXED }), 'msg.id=0190a6c4-8f4e-7a3b-9c1d-2e3f4a5b6c7d');
    await expect(olga.getByText('LOCKED_HEADER').count()).resolves.toBeGreaterThan(0);
    await submitEdit(olga, (p) => ({ ...p, title: FIXED }), 'traceparent=00-x');
    await expect(olga.getByText('LOCKED_HEADER').count()).resolves.toBeGreaterThan(0);
    await submitEdit(olga, (p) => ({ ...p, title: '' }));
    await expect(olga.getByText(/SCHEMA.*\/title: too_small/).count()).resolves.toBeGreaterThan(0);

    await submitEdit(olga, (p) => ({ ...p, title: FIXED }));
    await olga.waitForURL(/\/redrive\/plans\//);
    olgasPlan = olga.url();
    const rows = await olga.getByTestId('diff-row').allInnerTexts();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('/title');
    expect(rows[0]).toContain(JSON.stringify(POISON));
    expect(rows[0]).toContain(JSON.stringify(FIXED));
    await expect(olga.getByTestId('edit-validated').getAttribute('data-validated')).resolves.toBe('schema');
    await shot(olga, 'edit-plan');
  });

  it('the editor cannot approve their own edit', async () => {
    const olga = await signedIn('olga');
    await olga.goto(olgasPlan);
    await Promise.all([
      olga.waitForURL(/\/approve$/),
      olga.getByRole('button', { name: 'Approve this plan' }).click(),
    ]);
    await olga.goto(olgasPlan);
    await expect(olga.getByText(/Four eyes/).count()).resolves.toBeGreaterThan(0);
    await expect(olga.getByTestId('plan-state').getAttribute('data-state')).resolves.toBe('waiting');
  });

  it('refuses a diff changed in the plan store, at approval and at execution', async () => {
    const alice = await signedIn('alice');
    await submitEdit(alice, (p) => ({ ...p, title: `${FIXED} (alice)` }));
    await alice.waitForURL(/\/redrive\/plans\//);
    alicesPlan = alice.url();
    // Alice's plan with another payload under it, resealed, in a row of its own.
    const changed = await insertPlan(planted((await planRow(alicesPlan.split('/').pop()!)).plan));
    const bob = await signedIn('bob');
    await bob.goto(changed);
    // Shown (its hash is right), with the diff alice signed for: the payload under it is another.
    await expect(bob.getByTestId('plan-state').getAttribute('data-state')).resolves.toBe('waiting');
    await expect(bob.getByTestId('diff-row').innerText()).resolves.toContain('(alice)');
    await Promise.all([
      bob.waitForURL(/\/approve$/),
      bob.getByRole('button', { name: 'Approve this plan' }).click(),
    ]);
    await bob.goto(changed);
    await expect(bob.getByText(/the audit log has no plan with this hash/).count()).resolves.toBeGreaterThan(
      0,
    );
    await expect(bob.getByTestId('plan-state').getAttribute('data-state')).resolves.toBe('waiting');

    // Olga's plan approved as planned; a changed copy carrying that approval: it does not cover it.
    await pressOnPlan(bob, olgasPlan, 'Approve this plan');
    await expect(bob.getByTestId('approval').innerText()).resolves.toMatch(/^approved by bob/);
    const genuine = await planRow(olgasPlan.split('/').pop()!);
    const resealed = await insertPlan(planted(genuine.plan), genuine.approval);
    const unsealed = await insertPlan(
      { ...planted(genuine.plan), hash: genuine.plan.hash },
      genuine.approval,
    );
    await alice.goto(resealed);
    await expect(alice.getByTestId('plan-state').getAttribute('data-state')).resolves.toBe('waiting');
    await expect(alice.getByRole('button', { name: 'Execute edit' }).count()).resolves.toBe(0);
    const token = await csrfOf(alice);
    expect((await alice.request.post(`${resealed}/execute`, { form: { _csrf: token } })).status()).toBe(409);
    expect((await alice.request.post(`${unsealed}/execute`, { form: { _csrf: token } })).status()).toBe(404);
    expect(await dlqDepthOf(alice, base(), DLQ)).toBe(1);
    expect(await notifications()).toEqual([]);
  });

  it('approved by another person, the edit runs once: the handler applies the edited payload', async () => {
    const alice = await signedIn('alice');
    await pressOnPlan(alice, olgasPlan, 'Execute edit');
    await expect(alice.getByTestId('redriven').innerText()).resolves.toBe('1');
    await shot(alice, 'edit-executed');
    await eventually(async () => (await notifications()).length === 1, 60_000, 250);
    expect(await notifications()).toEqual([{ title: FIXED }]);
    expect(await dlqDepthOf(alice, base(), DLQ)).toBe(0);
    await alice.goto(`${base()}/dead-letters/${DLQ}/archive`);
    await expect(alice.getByText('PostCreated').count()).resolves.toBeGreaterThan(0);

    // Alice's edit of the same dead letter: stale now, and refused if approved anyway (the claim and the
    // refusals are the service's: redrive-edit.test.ts runs two approved edits at once).
    await alice.goto(alicesPlan);
    await expect(alice.getByTestId('plan-state').getAttribute('data-state')).resolves.toBe('stale');
    const bob = await signedIn('bob');
    await bob.goto(alicesPlan);
    const approving = await bob.request.post(`${alicesPlan}/approve`, { form: { _csrf: await csrfOf(bob) } });
    expect(approving.status()).toBe(409);
    expect(await notifications()).toEqual([{ title: FIXED }]);

    await alice.goto(`${base()}/audit?source=${DLQ}`);
    const audit = (await alice.locator('table[aria-label="Audit log"] tbody tr').allInnerTexts()).join('\n');
    expect(audit).toContain('EDITED');
    expect(audit).toMatch(/diff sha256:[0-9a-f]{64}/);
    expect(audit).not.toContain(FIXED); // the diff's hash, never the payload
    await shot(alice, 'edit-audit');
  });
});
