import { EnvironmentAuthenticator, parseConsoleUsers } from './environment-authenticator';
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
