import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PostgresRedriveLedger } from 'nest-reliable-messaging/redrive';
import { Browser, Page } from 'playwright-core';
import { BlogStack } from '../../tools/demo/blog-stack';
import { REPO_ROOT } from '../../tools/demo/build-services';
import { startOpsConsole } from '../../tools/demo/ops-console';
import { ServiceProcess } from '../../tools/demo/service-process';
import { eventually } from '../harness/eventually';
import { createTestSchema, TestSchema } from '../harness/postgres';
import { RabbitVhost } from '../integration/redrive/support/rabbit-vhost';
import { launchChromium } from './support/browser';
import { planFromHead, pressOnPlan } from './support/console-steps';
import { ConsoleUserName, ConsoleUsers, csrfOf } from './support/console-users';
import { e2eBuild } from './support/e2e-build';

const DLQ = 'post-create.subscribe-service.dlq';
const POISON = 'console glance e2e: blocked by a trigger';
const ZONE = 'Asia/Tokyo';

/** Where the screenshots go: with the test output, git-ignored (`.demo/`). */
const SHOTS = path.join(REPO_ROOT, '.demo', 'e2e', 'console-screenshots');

/**
 * Issue 29, items 5 and 6, in headless Chromium against the services and the ops console as processes
 * (RabbitMQ, a vhost and schemas of the suite's own): the overview at a glance (services up or down, the
 * oldest dead letter's age and its last hour as a small chart (issue 40), rows linked to the DLQ, times in
 * the viewer's zone, a page that refreshes itself), plans that survive a console restart and say when they
 * are stale, a refusal shown to its person only, a payload pretty-printed with copy and download, the audit
 * log filtered.
 */
describe('The operations console at a glance, and plans that behave (issue 29)', () => {
  let vhost: RabbitVhost | undefined;
  let stack: BlogStack | undefined;
  let subscribeDb: TestSchema | undefined;
  let schemas: TestSchema[] = [];
  let opsConsole: ServiceProcess | undefined;
  let browser: Browser | undefined;
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'e2e-console-glance-'));
  let base = '';
  const subscriberId = 8_000 + Math.floor(Math.random() * 1_000);
  const authorId = 18_000 + Math.floor(Math.random() * 1_000);

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    let postDb: TestSchema;
    let adminDb: TestSchema;
    [vhost, postDb, subscribeDb, adminDb, browser] = await Promise.all([
      RabbitVhost.create('e2e_glance'),
      createTestSchema('e2e_glance_post'),
      createTestSchema('e2e_glance_subscribe'),
      createTestSchema('e2e_glance_admin'),
      launchChromium(),
    ]);
    schemas = [postDb, subscribeDb, adminDb];
    await PostgresRedriveLedger.migrate({ url: adminDb.databaseUrl, schema: adminDb.name });
    stack = await BlogStack.start({
      transport: 'rabbitmq',
      kafkaBrokers: [],
      amqpUrl: vhost.urlAs(vhost.service),
      topologyAmqpUrl: vhost.urlAs(vhost.admin),
      databases: {
        post: { url: postDb.databaseUrl, schema: postDb.name },
        subscribe: { url: subscribeDb.databaseUrl, schema: subscribeDb.name },
      },
      build: e2eBuild(),
      logDir,
    });
    opsConsole = await startOpsConsole(e2eBuild(), {
      transport: 'rabbitmq',
      amqpUrl: vhost.urlAs(vhost.admin),
      kafkaBrokers: [],
      adminDatabase: { url: adminDb.databaseUrl, schema: adminDb.name },
      metrics: [
        { name: 'post-service', url: `${stack.post.url}/metrics` },
        { name: 'subscribe-service', url: `${stack.subscribe.url}/metrics` },
      ],
      deadLetterQueues: [DLQ],
      dir: logDir,
      // Pages refresh every second here, so that the suite sees a refresh without waiting long for one.
      env: { CONSOLE_REFRESH_SECONDS: '1' },
    });
    base = `${opsConsole.url}/console`;
  });

  afterAll(async () => {
    await browser?.close();
    await opsConsole?.stop();
    await stack?.stop();
    await vhost?.delete();
    await Promise.all(schemas.map((schema) => schema.drop()));
    process.stdout.write(`\nops console glance e2e: logs in ${logDir}, screenshots in ${SHOTS}\n`);
  });

  /** Each user's own browser context, in Tokyo. */
  const users = new ConsoleUsers({
    browser: () => browser!,
    base: () => base,
    viewport: { width: 1280, height: 900 },
    timezoneId: ZONE,
  });
  const signedIn = (name: ConsoleUserName) => users.page(name);

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(SHOTS, `glance-${name}.png`), fullPage: true });

  /** Parks a post's notification in the DLQ: a trigger refuses it (as a downstream outage would). */
  async function parkOne(title: string): Promise<void> {
    const [blog, db] = [stack!, subscribeDb!];
    await db.query(`
      create or replace function refuse_poison() returns trigger language plpgsql as $$
      begin
        if new.title like 'console glance e2e%' then raise exception 'notification store refuses this post'; end if;
        return new;
      end $$`);
    await db.query('drop trigger if exists refuse_poison on notifications');
    await db.query(
      'create trigger refuse_poison before insert on notifications for each row execute function refuse_poison()',
    );
    expect((await blog.client.createPost({ authorId, title, content: 'parked' })).status).toBe(201);
  }

  async function dlqDepth(page: Page): Promise<number> {
    await page.goto(base);
    const cell = page.locator(`tr[data-queue="${DLQ}"] td`).nth(1);
    return Number(await cell.innerText());
  }

  it('shows services up or down and the oldest dead letter’s age, in the viewer’s zone, linked to its DLQ', async () => {
    expect((await stack!.client.subscribe(subscriberId, authorId)).status).toBe(201);
    await parkOne(POISON);
    const victor = await signedIn('victor');
    await eventually(async () => (await dlqDepth(victor)) === 1, 60_000, 500);
    await subscribeDb!.query('drop trigger refuse_poison on notifications');

    await victor.goto(base);
    await expect(victor.locator('tr[data-service="post-service"]').getAttribute('data-state')).resolves.toBe(
      'up',
    );
    // The oldest dead letter's age, rendered in UTC and shown by the console's script in Tokyo's time.
    const oldest = victor.locator(`tr[data-queue="${DLQ}"] [data-testid="oldest"] time`);
    await oldest.and(victor.locator('[data-localised]')).waitFor();
    const utc = new Date((await oldest.getAttribute('datetime'))!);
    const tokyo = new Intl.DateTimeFormat('en-GB', {
      timeZone: ZONE,
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(utc);
    const text = await oldest.innerText();
    expect(text).toContain(` ${tokyo}:`);
    expect(text).toMatch(/GMT\+9 \((just now|\d+ (s|min) ago)\)$/);
    await shot(victor, 'overview');

    // Its last hour beside it, a small chart drawn by the console (a reading so far, or a few: a dot, a line).
    const chart = victor.locator(`tr[data-queue="${DLQ}"] svg[data-testid="trend"]`);
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(/: waiting, last 60 min: .*, now 1$/);
    // The page refreshes itself every second, replacing the chart: a box read as it is swapped is null (seen
    // in a CI run), so it is read again until one is laid out.
    await eventually(async () => {
      const box = await chart.boundingBox();
      expect(box && [box.width, box.height]).toEqual([96, 20]);
    }, 10_000);
    await expect(chart.locator('circle').count()).resolves.toBe(1);

    // The overview refreshes itself (the script's fetch, not a navigation) while nobody touches it.
    const main = victor.locator('main');
    // (The page's CSP allows no eval: the suite waits on the attribute the script sets.)
    await victor.locator('main[data-refreshed="2"]').waitFor();
    await expect(main.getAttribute('data-refresh')).resolves.toBe('1');

    // A service that stops reads as down on the next refresh, with when it last answered.
    await stack!.subscribe.stop();
    try {
      await victor
        .locator('tr[data-service="subscribe-service"][data-state="down"]')
        .waitFor({ timeout: 30_000 });
      await expect(victor.locator('tr[data-service="subscribe-service"]').innerText()).resolves.toMatch(
        /down .*last answered/s,
      );
      await shot(victor, 'service-down');
    } finally {
      await stack!.subscribe.start();
    }

    // The DLQ's row leads to its page.
    await victor.goto(base);
    await Promise.all([
      victor.waitForURL(`${base}/dead-letters/${DLQ}`),
      victor.locator(`tr[data-queue="${DLQ}"] a`).first().click(),
    ]);
  });

  it('pretty-prints a payload, copies it and downloads it as a file', async () => {
    const alice = await signedIn('alice');
    await alice
      .context()
      .grantPermissions(['clipboard-read', 'clipboard-write'], { origin: opsConsole!.url });
    await alice.goto(`${base}/dead-letters/${DLQ}`);
    await alice.locator('table[aria-label="Dead letters"] a').first().click();
    const shown = await alice.getByTestId('payload').innerText();
    expect(shown).toContain(POISON);
    expect(shown).toMatch(/^\{\n {2}"/); // JSON, indented
    await alice.getByRole('button', { name: 'Copy payload' }).click();
    // The page says so once the clipboard took it (asynchronously): wait for it rather than count at once.
    const copiedStatus = alice.getByRole('status').filter({ hasText: 'Copied.' });
    await copiedStatus.waitFor();
    await expect(copiedStatus.count()).resolves.toBe(1);
    const copied = String(await alice.evaluate('navigator.clipboard.readText()'));
    expect(copied.trim()).toBe(shown.trim());
    await shot(alice, 'payload');

    const [download] = await Promise.all([
      alice.waitForEvent('download'),
      alice.getByTestId('payload-download').click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^[0-9a-f-]{36}\.json$/);
    const file = readFileSync(await download.path(), 'utf8');
    expect(JSON.parse(file)).toEqual(JSON.parse(shown));

    // A viewer gets neither the payload nor its download.
    const victor = await signedIn('victor');
    const href = await alice.getByTestId('payload-download').getAttribute('href');
    const refused = await victor.request.get(`${opsConsole!.url}${href}`);
    expect(refused.status()).toBe(403);
  });

  let stalePlan = '';

  it('keeps plans across a console restart; a refusal is shown to its person only; a stale plan says so', async () => {
    const olga = await signedIn('olga');
    const olgasPlan = await planFromHead(olga, base, DLQ);
    await olga.getByRole('button', { name: 'Approve this plan' }).click();
    await expect(olga.getByRole('alert').innerText()).resolves.toContain('Four eyes');

    const alice = await signedIn('alice');
    const alicesPlan = await planFromHead(alice, base, DLQ);

    // The console restarts: everyone signs in again, the plans are still there.
    await opsConsole!.stop();
    await opsConsole!.start();
    await users.closeAll();

    const bob = await signedIn('bob');
    await bob.goto(olgasPlan);
    await expect(bob.getByTestId('planned-by').innerText()).resolves.toMatch(/^olga /);
    // Olga's refusal is hers: bob, who may approve, is not told "Four eyes".
    await expect(bob.getByRole('alert').count()).resolves.toBe(0);
    const olgaAgain = await signedIn('olga');
    await olgaAgain.goto(olgasPlan);
    await expect(olgaAgain.getByRole('alert').innerText()).resolves.toContain('Four eyes');

    for (const url of [olgasPlan, alicesPlan]) {
      await pressOnPlan(bob, url, 'Approve this plan');
      await expect(bob.getByTestId('plan-state').getAttribute('data-state')).resolves.toBe('approved');
    }

    // Bob keeps Olga's plan open; Alice runs hers, of the same message: Bob's page turns stale by itself.
    await bob.goto(olgasPlan);
    const aliceAgain = await signedIn('alice');
    await pressOnPlan(aliceAgain, alicesPlan, 'Execute redrive');
    await expect(aliceAgain.getByTestId('plan-state').getAttribute('data-state')).resolves.toBe('executed');
    await expect(aliceAgain.getByRole('button', { name: 'Execute redrive' }).count()).resolves.toBe(0);
    await bob.locator('[data-testid="plan-state"][data-state="stale"]').waitFor({ timeout: 30_000 });
    await expect(bob.getByTestId('plan-over').innerText()).resolves.toMatch(/^stale: redrive .* moved/);
    await shot(bob, 'stale-plan');

    await olgaAgain.goto(olgasPlan);
    await expect(olgaAgain.getByRole('button', { name: 'Execute redrive' }).count()).resolves.toBe(0);
    const forced = await olgaAgain.request.post(`${olgasPlan}/execute`, {
      form: { _csrf: await csrfOf(olgaAgain) },
    });
    expect(forced.status()).toBe(409);
    stalePlan = olgasPlan;
  });

  it('filters the audit log by actor, action and time, with times in the viewer’s zone', async () => {
    const victor = await signedIn('victor');
    await victor.goto(`${base}/audit`);
    await victor.getByLabel('Actor').fill('olga');
    await victor.getByLabel('Action').selectOption('REFUSE');
    await victor.getByLabel('From (UTC)').fill('2020-01-01T00:00');
    await Promise.all([
      victor.waitForURL(/actor=olga/),
      victor.getByRole('button', { name: 'Filter' }).click(),
    ]);
    const rows = await victor.locator('table[aria-label="Audit log"] tbody tr').allInnerTexts();
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) expect(row.split('\t').slice(2, 4)).toEqual(['REFUSE', 'olga']);
    expect(rows.join('\n')).toMatch(/APPROVAL_MISMATCH/);
    expect(rows.join('\n')).toMatch(/STALE_PLAN/);
    await expect(
      victor.locator('table[aria-label="Audit log"] time[data-localised]').first().innerText(),
    ).resolves.toContain('GMT+9');
    await shot(victor, 'audit-filtered');

    // The audit page refreshes itself, but not while its filter holds changed input: what is typed stays.
    // (The clock is the overview in another tab of the same session, which refreshes at the same pace.)
    await victor.locator('main[data-refreshed]').waitFor();
    await victor.getByLabel('Actor').fill('bob');
    await victor.getByRole('heading', { name: 'Audit log' }).click(); // the field loses focus, keeps its input
    // From here no refresh replaces the page (one under way when the input changed is dropped, too).
    const before = await victor.locator('main').getAttribute('data-refreshed');
    const clock = await victor.context().newPage();
    await clock.goto(base);
    await clock.locator('main[data-refreshed="3"]').waitFor();
    await expect(victor.locator('main').getAttribute('data-refreshed')).resolves.toBe(before);
    await expect(victor.getByLabel('Actor').inputValue()).resolves.toBe('bob');
    await clock.close();
    await victor.getByLabel('Actor').fill('olga'); // as the page has it: the refreshes go on
    await victor.getByRole('heading', { name: 'Audit log' }).click();
    await victor.locator(`main:not([data-refreshed="${before}"])`).waitFor();

    await victor.getByLabel('From (UTC)').fill('2999-01-01T00:00');
    await Promise.all([
      victor.waitForURL(/from=2999/),
      victor.getByRole('button', { name: 'Filter' }).click(),
    ]);
    await expect(victor.getByRole('cell', { name: 'No entries.' }).count()).resolves.toBe(1);
    expect(stalePlan).not.toBe('');
  });
});
