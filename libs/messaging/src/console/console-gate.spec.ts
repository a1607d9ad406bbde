import { RedriveAuditEntry, RedriveLedger } from '../dead-letter/redrive/ledger/redrive-ledger.interface';
import { RedriveService } from '../dead-letter/redrive/redrive.service';
import { ConsoleGate } from './console-gate';
import { ConsoleRequest, ConsoleResponse } from './console-http';
import { ConsoleUser, MessagingConsoleOptions } from './console-options.interface';

/** Records what the gate answers. */
class FakeResponse implements ConsoleResponse {
  statusCode = 200;
  body = '';
  location?: string;
  readonly headers = new Map<string, unknown>();
  status(code: number) {
    this.statusCode = code;
    return this;
  }
  setHeader(name: string, value: string | readonly string[]) {
    this.headers.set(name.toLowerCase(), value);
    return this;
  }
  getHeader(name: string) {
    return this.headers.get(name.toLowerCase());
  }
  send(body: string) {
    this.body = body;
    return this;
  }
  redirect(status: number, url: string) {
    this.statusCode = status;
    this.location = url;
  }
  /** The cookies it sets, by name. */
  cookies(): Record<string, string> {
    const list = (this.headers.get('set-cookie') as string[] | undefined) ?? [];
    return Object.fromEntries(list.map((c) => c.split(';')[0].split('=') as [string, string]));
  }
}

const USERS: Record<string, ConsoleUser & { password: string }> = {
  alice: { name: 'alice', roles: ['operator'], password: 'alice-pw' },
  victor: { name: 'victor', roles: ['viewer'], password: 'victor-pw' },
};

function gate(now: { ms: number }) {
  const entries: RedriveAuditEntry[] = [];
  const ledger = { record: async (e: RedriveAuditEntry) => void entries.push(e) } as unknown as RedriveLedger;
  const options: MessagingConsoleOptions = {
    redrive: { transport: 'rabbitmq' } as RedriveService,
    ledger,
    authenticator: {
      authenticate: async (name, password) => {
        const user = USERS[name];
        return user && user.password === password ? { name: user.name, roles: user.roles } : undefined;
      },
    },
    deadLetterQueues: [],
    sessionTtlMs: 60_000,
    clock: () => new Date(now.ms),
  };
  return { gate: new ConsoleGate(options, '/console'), entries };
}

const request = (cookies: Record<string, string>, body: Record<string, unknown> = {}): ConsoleRequest => ({
  method: 'POST',
  headers: {
    cookie: Object.entries(cookies)
      .map(([k, v]) => `${k}=${v}`)
      .join('; '),
  },
  body,
  query: {},
  params: {},
  secure: false,
});

/** Signs `name` in through the form, as a browser would; returns the session cookie and the CSRF token. */
async function signIn(g: ConsoleGate, name: string) {
  const form = new FakeResponse();
  g.loginForm(request({}), form);
  const loginToken = form.cookies().messaging_console_login;
  const answer = new FakeResponse();
  await g.signIn(
    request(form.cookies(), { _csrf: loginToken, name, password: USERS[name].password }),
    answer,
  );
  const cookies = { messaging_console_session: answer.cookies().messaging_console_session };
  const page = new FakeResponse();
  const session = await g.forPage(request(cookies), page);
  return { cookies, csrf: session!.csrfToken, answer };
}

describe(ConsoleGate.name, () => {
  describe('signIn', () => {
    it('opens a session for the right password, with an HttpOnly SameSite=Strict cookie on the console path', async () => {
      const { gate: g, entries } = gate({ ms: 0 });
      const { answer } = await signIn(g, 'alice');
      expect(answer.statusCode).toBe(303);
      const setCookie = (answer.getHeader('set-cookie') as string[]).find((c) =>
        c.startsWith('messaging_console_session='),
      );
      expect(setCookie).toMatch(/; Path=\/console; Max-Age=60; HttpOnly; SameSite=Strict$/);
      expect(entries).toMatchObject([{ action: 'ACCESS', actor: 'alice', outcome: 'SIGNED_IN' }]);
    });

    it('refuses a wrong password (401) and a sign-in form without its token (403), and records both', async () => {
      const { gate: g, entries } = gate({ ms: 0 });
      const form = new FakeResponse();
      g.loginForm(request({}), form);
      const wrong = new FakeResponse();
      const token = form.cookies().messaging_console_login;
      await g.signIn(request(form.cookies(), { _csrf: token, name: 'alice', password: 'nope' }), wrong);
      expect(wrong.statusCode).toBe(401);
      const forged = new FakeResponse();
      await g.signIn(request({}, { _csrf: 'x', name: 'alice', password: 'alice-pw' }), forged);
      expect(forged.statusCode).toBe(403);
      expect(entries.map((e) => e.outcome)).toEqual(['SIGN_IN_FAILED', 'CSRF_REFUSED']);
    });
  });

  describe('forForm', () => {
    it('checks the session, then the CSRF token, then the role, and records each refusal', async () => {
      const { gate: g, entries } = gate({ ms: 0 });
      const alice = await signIn(g, 'alice');
      const victor = await signIn(g, 'victor');
      const cases = [
        [request({}, { _csrf: alice.csrf }), 'NOT_SIGNED_IN'],
        [request(alice.cookies), 'CSRF_REFUSED'],
        [request(alice.cookies, { _csrf: victor.csrf }), 'CSRF_REFUSED'],
        [request(victor.cookies, { _csrf: victor.csrf }), 'FORBIDDEN'],
      ] as const;
      for (const [req, outcome] of cases) {
        const res = new FakeResponse();
        await expect(g.forForm(req, res, 'plan')).resolves.toBeUndefined();
        expect(res.statusCode).toBe(403);
        expect(entries.at(-1)).toMatchObject({ action: 'ACCESS', outcome });
      }
      const ok = new FakeResponse();
      await expect(
        g.forForm(request(alice.cookies, { _csrf: alice.csrf }), ok, 'plan'),
      ).resolves.toMatchObject({
        user: { name: 'alice' },
      });
    });
  });

  describe('forPage', () => {
    it('sends a visitor without a live session to the sign-in page, also once the session expired', async () => {
      const now = { ms: 0 };
      const { gate: g } = gate(now);
      const nobody = new FakeResponse();
      await expect(g.forPage(request({}), nobody)).resolves.toBeUndefined();
      expect(nobody.location).toBe('/console/login');
      const alice = await signIn(g, 'alice');
      now.ms = 60_000;
      const late = new FakeResponse();
      await expect(g.forPage(request(alice.cookies), late)).resolves.toBeUndefined();
      expect(late.location).toBe('/console/login');
    });
  });
});
