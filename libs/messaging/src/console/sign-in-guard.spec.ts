import * as fc from 'fast-check';
import { addressKey, BoundedConcurrency, DEFAULT_SIGN_IN_LIMITS, SignInGuard } from './sign-in-guard';

const S = 1_000;

function guard(limits = {}) {
  const clock = { ms: 0 };
  return { guard: new SignInGuard(limits, () => clock.ms), clock };
}

describe(SignInGuard.name, () => {
  // Issue 45 item 4: attempts are reserved before their passwords are checked.
  describe('reserve', () => {
    it('reserves at most the failures an account has left, then one at a time once its wait is over', () => {
      const { guard: g, clock } = guard({ maxInFlightEach: 5 });
      for (let i = 0; i < 5; i++) expect(g.reserve('alice', `10.0.0.${i}`)).toEqual({ allowed: true });
      expect(g.reserve('alice', '10.0.0.9')).toMatchObject({ allowed: false, by: 'account' });
      for (let i = 0; i < 5; i++) g.failed('alice', `10.0.0.${i}`);
      expect(g.reserve('alice', '10.0.0.9')).toMatchObject({ allowed: false, retryAfterMs: 30 * S });
      clock.ms += 30 * S;
      expect(g.reserve('alice', '10.0.0.9')).toEqual({ allowed: true });
      expect(g.reserve('alice', '10.0.0.8')).toMatchObject({ allowed: false, by: 'account' });
      g.released('alice', '10.0.0.9');
      expect(g.reserve('alice', '10.0.0.8')).toEqual({ allowed: true });
      g.succeeded('alice', '10.0.0.8');
      expect(g.reserve('alice', '10.0.0.8')).toEqual({ allowed: true });
    });

    // Issue 45 finding 9: one address could hold 20 places of the 22 in the sign-in line.
    it('reserves at most maxInFlightEach at once per address (an IPv6 /64 is one) and per name', () => {
      const { guard: g } = guard();
      for (let i = 1; i <= 4; i++) expect(g.reserve(`n${i}`, `2001:db8::${i}`)).toEqual({ allowed: true });
      expect(g.reserve('n5', '2001:db8::5')).toMatchObject({ allowed: false, by: 'address' });
      expect(g.reserve('n5', '2001:db8:0:1::5')).toEqual({ allowed: true });
      g.released('n1', '2001:db8::1');
      expect(g.reserve('n5', '2001:db8::5')).toEqual({ allowed: true });
      const { guard: h } = guard({ accountFailures: 50 });
      for (let i = 1; i <= 4; i++) expect(h.reserve('alice', `10.0.0.${i}`)).toEqual({ allowed: true });
      expect(h.reserve('alice', '10.0.0.5')).toMatchObject({ allowed: false, by: 'account' });
    });

    it('filling the table with other addresses does not lift an address lockout', () => {
      const { guard: g } = guard({ addressFailures: 1 });
      g.reserve('a', '10.9.9.9');
      g.failed('a', '10.9.9.9');
      expect(g.reserve('b', '10.9.9.9')).toMatchObject({ allowed: false, by: 'address' });
      for (let i = 0; i < 10_050; i++) {
        const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
        if (g.reserve(`x${i}`, address).allowed) g.failed(`x${i}`, address);
      }
      expect(g.reserve('b', '10.9.9.9')).toMatchObject({ allowed: false, by: 'address' });
    });

    // Issue 45 finding 10: made-up names filled the table real accounts are kept in; once it was full of
    // waiting entries, a real account not yet tracked was refused (sign-in denied to real users).
    // claim: C-112
    it('guesses against made-up names neither crowd out a real account nor lift its lockout', () => {
      const { guard: g } = guard({ addressFailures: 1_000_000 });
      for (let i = 0; i < 5; i++) {
        g.reserve('jane', '10.1.1.1');
        g.failed('jane', '10.1.1.1', true);
      }
      g.reserve('ALICE', '10.1.1.1');
      g.failed('ALICE', '10.1.1.1', false); // made up: 'alice' is the real name
      g.reserve('alice', '10.1.1.1');
      g.failed('alice', '10.1.1.1', true);
      for (let i = 0; i < 10_050; i++) {
        const [name, address] = [`ghost${i}`, `10.2.${(i >> 8) & 255}.${i & 255}`];
        for (let j = 0; j < 5; j++) if (g.reserve(name, address).allowed) g.failed(name, address, false);
        if (i < 3) expect(g.check(name, '10.9.9.9')).toMatchObject({ allowed: false, by: 'account' });
      }
      expect(g.reserve('victor', '10.3.3.3')).toEqual({ allowed: true }); // never tracked: not refused
      expect(g.check('jane', '10.3.3.3')).toMatchObject({ allowed: false, by: 'account' });
      for (let i = 0; i < 3; i++) g.failed('alice', '10.1.1.1', true);
      expect(g.check('alice', '10.3.3.3')).toMatchObject({ allowed: false, by: 'account' });
      for (let i = 0; i < 10_050; i++) g.failed(`spook${i}`, '10.4.4.4', false);
      expect(g.check('alice', '10.3.3.3')).toMatchObject({ allowed: false, by: 'account' });
    });

    it('keys an IPv6 address by its /64, an IPv4-mapped one as IPv4', () => {
      expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
      expect(addressKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
      expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
      expect(addressKey('::ffff:10.0.0.1')).toBe('10.0.0.1');
      expect(addressKey('10.0.0.1')).toBe('10.0.0.1');
      const { guard: g } = guard({ addressFailures: 2 });
      for (let i = 0; i < 2; i++) {
        g.reserve(`n${i}`, `2001:db8:1:2::${i + 1}`);
        g.failed(`n${i}`, `2001:db8:1:2::${i + 1}`);
      }
      expect(g.reserve('other', '2001:db8:1:2:ffff::9')).toMatchObject({ allowed: false, by: 'address' });
      expect(g.reserve('other', '2001:db8:1:3::9')).toEqual({ allowed: true });
    });
  });

  describe('check', () => {
    // claim: C-78
    it('lets an account try 5 times, then waits 30 s, doubling with each further failure up to 15 min', () => {
      const { guard: g, clock } = guard();
      for (let i = 0; i < 4; i++) {
        expect(g.check('alice', '10.0.0.1')).toEqual({ allowed: true });
        expect(g.failed('alice', '10.0.0.1')).toBe(false);
      }
      expect(g.failed('alice', '10.0.0.1')).toBe(true); // the fifth reaches the limit
      expect(g.check('alice', '10.0.0.1')).toEqual({ allowed: false, retryAfterMs: 30 * S, by: 'account' });
      expect(g.check('ALICE', '10.0.0.9')).toMatchObject({ allowed: false, by: 'account' });
      clock.ms += 30 * S;
      expect(g.check('alice', '10.0.0.1')).toEqual({ allowed: true });
      g.failed('alice', '10.0.0.1');
      expect(g.check('alice', '10.0.0.1')).toMatchObject({ retryAfterMs: 60 * S });
      for (let i = 0; i < 10; i++) {
        const wait = g.check('alice', '10.0.0.1');
        clock.ms += wait.allowed ? 0 : wait.retryAfterMs;
        g.failed('alice', '10.0.0.1');
      }
      expect(g.check('alice', '10.0.0.1')).toMatchObject({ retryAfterMs: 15 * 60 * S });
    });

    it('limits an address across accounts, and a success does not clear it', () => {
      const { guard: g } = guard({ addressFailures: 3 });
      for (const name of ['a', 'b', 'c']) g.failed(name, '10.0.0.1');
      expect(g.check('d', '10.0.0.1')).toMatchObject({ allowed: false, by: 'address' });
      g.succeeded('d');
      expect(g.check('d', '10.0.0.1')).toMatchObject({ allowed: false, by: 'address' });
      expect(g.check('d', '10.0.0.2')).toEqual({ allowed: true });
    });

    it('forgets failures after 15 quiet minutes, and a success clears the account', () => {
      const { guard: g, clock } = guard();
      for (let i = 0; i < 4; i++) g.failed('bob', '10.0.0.1');
      clock.ms += 15 * 60 * S;
      g.failed('bob', '10.0.0.1');
      expect(g.check('bob', '10.0.0.1')).toEqual({ allowed: true });
      for (let i = 0; i < 3; i++) g.failed('bob', '10.0.0.1');
      g.succeeded('bob');
      g.failed('bob', '10.0.0.1');
      expect(g.check('bob', '10.0.0.1')).toEqual({ allowed: true });
    });

    it('checks a guessed account at most 5 times in any 30 s, whatever the attempts (property)', () => {
      // A guesser's attempts at any pace: the password is checked at most `accountFailures` times in any
      // window of `baseDelayMs` (before: 200 wrong passwords in 48 s were all checked).
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 0, max: 20 * S }), { maxLength: 400 }), (steps) => {
          const { guard: g, clock } = guard();
          const checks: number[] = [];
          for (const step of steps) {
            clock.ms += step;
            if (!g.check('alice', '10.0.0.1').allowed) continue;
            checks.push(clock.ms);
            g.failed('alice', '10.0.0.1');
          }
          const limit = DEFAULT_SIGN_IN_LIMITS.accountFailures;
          for (let i = limit; i < checks.length; i++) {
            expect(checks[i] - checks[i - limit]).toBeGreaterThanOrEqual(DEFAULT_SIGN_IN_LIMITS.baseDelayMs);
          }
        }),
      );
    });

    it('lets the right password in once the longest wait has passed, after any history (property)', () => {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.constantFrom('alice', 'bob'), fc.boolean(), fc.nat(60 * S)), {
            maxLength: 200,
          }),
          (attempts) => {
            const { guard: g, clock } = guard();
            for (const [name, right, step] of attempts) {
              clock.ms += step;
              if (!g.check(name, '10.0.0.1').allowed) continue;
              if (right) g.succeeded(name);
              else g.failed(name, '10.0.0.1');
            }
            clock.ms += DEFAULT_SIGN_IN_LIMITS.maxDelayMs;
            expect(g.check('alice', '10.0.0.1')).toEqual({ allowed: true });
          },
        ),
      );
    });
  });
});

describe(BoundedConcurrency.name, () => {
  it('runs at most `limit` tasks at once, queues `maxWaiting`, refuses the rest at once', async () => {
    const bound = new BoundedConcurrency(2, 3);
    let running = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const task = () =>
      new Promise<string>((resolve) => {
        running += 1;
        most = Math.max(most, running);
        releases.push(() => {
          running -= 1;
          resolve('done');
        });
      });
    const runs = Array.from({ length: 8 }, () => bound.run(task));
    expect(await Promise.all(runs.slice(5))).toEqual([undefined, undefined, undefined]);
    while (releases.length > 0 || running > 0) {
      releases.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    expect(await Promise.all(runs.slice(0, 5))).toEqual(Array.from({ length: 5 }, () => ({ value: 'done' })));
    expect(most).toBe(2);
  });
});
