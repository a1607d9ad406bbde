import { EnvironmentAuthenticator, parseConsoleUsers } from './environment-authenticator';
import * as passwordHash from './password-hash';
import { hashPassword, verifyPassword } from './password-hash';

describe(EnvironmentAuthenticator.name, () => {
  let users: ReturnType<typeof parseConsoleUsers>;

  beforeAll(async () => {
    users = parseConsoleUsers(
      JSON.stringify([
        { name: 'alice', roles: ['operator'], passwordHash: await hashPassword('alice-secret') },
        { name: 'bob', roles: ['approver', 'viewer'], passwordHash: await hashPassword('bob-secret') },
      ]),
    );
  });

  describe('authenticate', () => {
    it('admits a user with the right password, with their roles', async () => {
      const auth = new EnvironmentAuthenticator(users);
      await expect(auth.authenticate('bob', 'bob-secret')).resolves.toEqual({
        name: 'bob',
        roles: ['approver', 'viewer'],
      });
    });

    it('admits nobody with a wrong password, another user’s password or an unknown name', async () => {
      const auth = new EnvironmentAuthenticator(users);
      await expect(auth.authenticate('alice', 'alice-secreT')).resolves.toBeUndefined();
      await expect(auth.authenticate('alice', 'bob-secret')).resolves.toBeUndefined();
      await expect(auth.authenticate('mallory', 'alice-secret')).resolves.toBeUndefined();
      await expect(auth.authenticate('ALICE', 'alice-secret')).resolves.toBeUndefined();
    });

    // Issue 45 finding 10: an unknown name or an empty password must cost a scrypt hash like a wrong password.
    // claim: C-112
    it('runs the scrypt check for an unknown name and an empty password too', async () => {
      const auth = new EnvironmentAuthenticator(users);
      const verify = jest.spyOn(passwordHash, 'verifyPassword');
      try {
        await auth.authenticate('mallory', 'x');
        await auth.authenticate('alice', '');
        await auth.authenticate('', '');
        expect(
          verify.mock.calls.map(([password, hash]) => [password, hash === users[0].passwordHash]),
        ).toEqual([
          ['x', true],
          ['', true],
          ['', true],
        ]);
        await Promise.all(verify.mock.results.map((r) => r.value as Promise<boolean>));
      } finally {
        verify.mockRestore();
      }
    });

    it('says which names it knows, in any case, for the console to count made-up ones apart', () => {
      const auth = new EnvironmentAuthenticator(users);
      expect([auth.knows('alice'), auth.knows('ALICE'), auth.knows('mallory'), auth.knows('')]).toEqual([
        true,
        true,
        false,
        false,
      ]);
    });
  });
});

describe(parseConsoleUsers.name, () => {
  it('refuses non-JSON, unknown roles, plain-text passwords, bad names and a name given twice', async () => {
    const hash = await hashPassword('password1');
    const users = (list: unknown) => () => parseConsoleUsers(JSON.stringify(list));
    expect(() => parseConsoleUsers('alice:secret')).toThrow(/not JSON/);
    expect(users([{ name: 'a', roles: ['admin'], passwordHash: hash }])).toThrow(/roles/);
    expect(users([{ name: 'a', roles: ['viewer'], passwordHash: 'password1' }])).toThrow(/scrypt/);
    expect(users([{ name: 'a b', roles: ['viewer'], passwordHash: hash }])).toThrow(/name/);
    expect(users([{ name: 'a', roles: [], passwordHash: hash }])).toThrow(/roles/);
    const twice = [
      { name: 'Ann', roles: ['viewer'], passwordHash: hash },
      { name: 'ann', roles: ['operator'], passwordHash: hash },
    ];
    expect(users(twice)).toThrow(/twice/);
    expect(users([])).toThrow();
  });
});

describe(hashPassword.name, () => {
  it('salts each hash, verifies the password and nothing else, refuses short passwords', async () => {
    const [a, b] = [await hashPassword('correct horse'), await hashPassword('correct horse')];
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    await expect(verifyPassword('correct horse', a)).resolves.toBe(true);
    await expect(verifyPassword('correct horsE', a)).resolves.toBe(false);
    await expect(verifyPassword('correct horse', 'not-a-hash')).resolves.toBe(false);
    await expect(hashPassword('short')).rejects.toThrow(/8 characters/);
  });
});
