import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { INestApplication, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import {
  ConsoleAuthenticator,
  ConsoleUser,
  MemoryConsolePlanStore,
  MessagingConsoleModule,
} from 'nest-reliable-messaging/console';
import { readApproverSigner } from 'nest-reliable-messaging/redrive';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { depthOf, parkedOrder, sendToQueues } from '../redrive/support/parked-messages';
import { newGroupQueues, useRabbitRedriveSuite } from '../redrive/support/rabbit-redrive-suite';
import { RedriveFixture } from '../redrive/support/redrive-fixture';

const PASSWORD = 'a long enough password';
const USERS: readonly ConsoleUser[] = [
  { name: 'alice', roles: ['viewer', 'operator'] },
  { name: 'bob', roles: ['viewer', 'approver'] },
  { name: 'victor', roles: ['viewer'] },
];
const authenticator: ConsoleAuthenticator = {
  authenticate: (name, password) =>
    Promise.resolve(password === PASSWORD ? USERS.find((u) => u.name === name) : undefined),
};

/** A browser's view of the console: one user's cookie jar, requests without following redirects. */
class ConsoleClient {
  private readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(private readonly base: string) {}

  async get(route: string): Promise<Response> {
    return this.remember(await fetch(this.url(route), { headers: this.headers(), redirect: 'manual' }));
  }

  async post(route: string, form: Record<string, string>): Promise<Response> {
    const body = new URLSearchParams({ _csrf: this.csrf, ...form }).toString();
    return this.remember(
      await fetch(this.url(route), {
        method: 'POST',
        headers: { ...this.headers(), 'content-type': 'application/x-www-form-urlencoded' },
        body,
        redirect: 'manual',
      }),
    );
  }

  /** Signs in through the sign-in form, then reads the session's CSRF token off a page. */
  async signIn(name: string): Promise<this> {
    const form = await this.get('/login');
    this.csrf = tokenOf(await form.text());
    const signedIn = await this.post('/login', { name, password: PASSWORD });
    expect(signedIn.status).toBe(303);
    this.csrf = tokenOf(await (await this.get('/redrive')).text());
    return this;
  }

  private url(route: string): string {
    return `${this.base}${route}`;
  }

  private headers(): Record<string, string> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    return cookie ? { cookie } : {};
  }

  private remember(response: Response): Response {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  }
}

function tokenOf(html: string): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`no CSRF token on the page:\n${html.slice(0, 500)}`);
  return token;
}

/** The security headers guide 09 promises on every page (Sessions, CSRF, headers). */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

function pageHeadersOf(response: Response): Record<string, string | null> {
  return Object.fromEntries(Object.keys(PAGE_HEADERS).map((name) => [name, response.headers.get(name)]));
}

/**
 * The console as an application mounts it (MessagingConsoleModule in a Nest app over HTTP, url-encoded forms
 * as ops-console parses them), on RabbitMQ with an admin database of its own: what a browser gets back.
 */
describe('The console over HTTP (RabbitMQ, PostgreSQL admin database)', () => {
  const suite = useRabbitRedriveSuite('console_http');
  const plans = new MemoryConsolePlanStore();
  let app: INestApplication | undefined;
  let base = '';
  let port = 0;
  let dlq = '';
  let folder = '';

  beforeAll(async () => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'console-http-'));
    const queues = await newGroupQueues(suite.connection, 'console_http');
    dlq = queues.dlq;
    await sendToQueues(suite.connection, [parkedOrder(queues.destination, 'billing', 1)]);
    // The console's operator is a person of the identity map (the redrive names planners by person).
    suite.fixture.admit('alice');
    const { vhost } = suite;
    const redrive = suite.fixture.service(
      { kind: 'rabbitmq', url: vhost.url },
      { principal: vhost.admin.name, secret: vhost.admin.password },
    );
    const created = await NestFactory.create<NestExpressApplication>(
      MessagingConsoleModule.forRoot({
        path: 'console',
        redrive,
        ledger: suite.fixture.ledger,
        // The suite's login is the database's superuser: accepted here (redrive-overrides.test.ts).
        allowRewritableAudit: true,
        authenticator,
        approverSigners: [readApproverSigner(suite.fixture.keys.bob.privateKeyFile)],
        deadLetterQueues: [dlq],
        planStore: plans,
      }),
      { bodyParser: false, logger: false },
    );
    created.useBodyParser('urlencoded', { extended: false, limit: '16kb' });
    // Every interface, as a container or a careless deployment listens: the console itself tells a connection
    // made to loopback from one made to another address of this machine.
    await created.listen(0, '0.0.0.0');
    app = created;
    port = (created.getHttpServer().address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}/console`;
  });

  afterAll(async () => {
    await app?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  beforeEach(() => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it('without secureCookies, answers a connection made to another address of this machine with 403, and loopback with the page', async () => {
    const outside = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
    if (!outside) throw new Error('this test needs an IPv4 address of this machine besides loopback');
    const elsewhere = await fetch(`http://${outside.address}:${port}/console/login`, { redirect: 'manual' });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.headers.getSetCookie()).toEqual([]);
    expect(await elsewhere.text()).toContain('loopback address only');
    expect((await fetch(`${base}/login`, { redirect: 'manual' })).status).toBe(200);
  });

  // claim: C-79
  it('sends every page, refusal and error page with its CSP, no-store, nosniff and no-referrer', async () => {
    const nobody = new ConsoleClient(base);
    const loginForm = await nobody.get('/login');
    nobody.csrf = tokenOf(await loginForm.clone().text());
    const pages: Array<[string, Response]> = [['GET /login', loginForm]];
    const alice = await new ConsoleClient(base).signIn('alice');
    const victor = await new ConsoleClient(base).signIn('victor');
    const list = await alice.get(`/dead-letters/${dlq}`);
    const html = await list.text();
    const link = new RegExp(`/dead-letters/${dlq.replace(/\./g, '\\.')}/messages/([^"?]+)\\?at=(q\\d+)`).exec(
      html,
    );
    expect(link).not.toBeNull();
    const [, id, at] = link!;
    pages.push([`GET /dead-letters/${dlq}`, list]);
    for (const route of [
      '',
      '/dead-letters',
      `/dead-letters/${dlq}/messages/${id}?at=${at}`,
      `/dead-letters/${dlq}/groups`,
      `/dead-letters/${dlq}/all`,
      `/dead-letters/${dlq}/search`,
      `/dead-letters/${dlq}/archive`,
      '/redrive',
      '/audit',
      '/redrive/plans/no-such-plan', // 404
      '/dead-letters/not.a.console.dlq', // refused: not one of the console's queues
    ]) {
      pages.push([`GET ${route}`, await alice.get(route)]);
    }
    pages.push(['POST /login (wrong password)', await nobody.post('/login', { name: 'x', password: 'y' })]);
    pages.push(['viewer GET message', await victor.get(`/dead-letters/${dlq}/messages/${id}?at=${at}`)]);
    pages.push(['viewer POST plan (403)', await victor.post('/redrive/plans', { source: dlq, limit: '1' })]);
    pages.push([
      'POST plan without CSRF (403)',
      await alice.post('/redrive/plans', { _csrf: '', source: dlq }),
    ]);
    pages.push(['POST plan, limit 0 (400)', await alice.post('/redrive/plans', { source: dlq, limit: '0' })]);

    const statuses = new Set(pages.map(([, r]) => r.status));
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 400, 401, 403, 404]));
    for (const [what, response] of pages) {
      expect({ what, type: response.headers.get('content-type') }).toEqual({
        what,
        type: 'text/html; charset=utf-8',
      });
      expect({ what, headers: pageHeadersOf(response) }).toEqual({ what, headers: PAGE_HEADERS });
    }
  });

  // claim: C-76
  it('executes only a plan approved in it: a CLI approval posted with the form is ignored, and the console’s approval is one the CLI takes', async () => {
    const alice = await new ConsoleClient(base).signIn('alice');
    const planned = await alice.post('/redrive/plans', { source: dlq, limit: '1' });
    expect(planned.status).toBe(303);
    const planRoute = new URL(planned.headers.get('location')!, base).pathname.replace(/^\/console/, '');
    const entry = (await plans.get(planRoute.split('/').pop()!))!;
    expect(entry.plan.messages).toHaveLength(1);

    // An approval by jane, made as `dlq approve` makes it, sent along with the execute form: refused, nothing moved.
    const cliApproval = suite.fixture.approval(entry.plan, 'jane');
    const refused = await alice.post(`${planRoute}/execute`, {
      approval: JSON.stringify(cliApproval),
      approvalFile: JSON.stringify(cliApproval),
    });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('it waits for an approval by another person');
    expect(await depthOf(suite.connection, dlq)).toBe(1);
    expect((await suite.fixture.history(dlq)).map((e) => e.outcome)).not.toContain('REDRIVEN');

    // bob approves in the console; that approval, handed to the CLI's `dlq redrive`, moves the message.
    const bob = await new ConsoleClient(base).signIn('bob');
    const approval = await bob.post(`${planRoute}/approve`, {});
    const notice = /class="notice[^>]*>([^<]*)/.exec(await approval.text())?.[1];
    expect({ status: approval.status, notice }).toEqual({ status: 303, notice: undefined });
    const approved = (await plans.get(entry.id))!;
    expect(approved.approval?.approver).toBe('bob');
    writeFileSync(path.join(folder, 'plan.json'), JSON.stringify(approved.plan));
    writeFileSync(path.join(folder, 'plan.approval.json'), JSON.stringify(approved.approval));
    let err = '';
    const io: CliIo = {
      env: { ...suite.fixture.cliEnv, MESSAGING_ADMIN_AMQP_URL: suite.vhost.urlAs(suite.vhost.admin) },
      out: () => undefined,
      err: (text) => void (err += text),
      cwd: folder,
      now: () => new Date(),
    };
    const code = await runMessagingCli(
      ['dlq', 'redrive', '--plan', 'plan.json', '--approval', 'plan.approval.json'],
      io,
    );
    expect({ code, err: RedriveFixture.withoutRewriteWarning(err) }).toEqual({ code: 0, err: '' });
    expect(await depthOf(suite.connection, dlq)).toBe(0);
    expect(await depthOf(suite.connection, dlq.replace(/\.dlq$/, ''))).toBe(1);
  });
});
