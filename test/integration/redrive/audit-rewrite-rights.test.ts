import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { PostgresRedriveLedger } from 'nest-reliable-messaging/redrive';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { infraEnv } from '../../harness/infra';
import { uniqueName } from '../../harness/names';
import { AdminDatabaseRoles, DatabaseLogin } from './support/admin-database-roles';

/**
 * Issue 45 finding 15: `rewriteRights()` names every way a login could rewrite the audit log despite its
 * triggers: membership of the owner role without INHERIT (it may SET ROLE), TRIGGER, and rights on the nonce
 * table and the chain head; the guide's recipe still has none.
 */
describe('PostgresRedriveLedger.rewriteRights on the real admin database', () => {
  let roles: AdminDatabaseRoles;
  const extra: string[] = [];

  const asSuperuser = async (sql: string[]) => {
    const db = new Client({ connectionString: infraEnv().databaseUrl });
    await db.connect();
    try {
      for (const statement of sql) await db.query(statement);
    } finally {
      await db.end();
    }
  };

  /** A login that may read the ledger (as the recipe's) plus `more`, granted by the superuser. */
  const login = async (
    name: string,
    more: (role: string, schema: string) => string[],
  ): Promise<DatabaseLogin> => {
    const role = uniqueName(`rr_${name}`);
    const password = randomBytes(12).toString('hex');
    extra.push(role);
    const s = roles.schema;
    await asSuperuser([
      `create role ${role} login password '${password}'`,
      `grant usage on schema ${s} to ${role}`,
      `grant select on ${s}.messaging_redrive_audit, ${s}.messaging_redrive_nonce, ${s}.messaging_redrive_audit_head to ${role}`,
      ...more(role, s),
    ]);
    const url = new URL(infraEnv().databaseUrl);
    url.username = role;
    url.password = password;
    return { role, password, url: url.toString() };
  };

  const rightsOf = async (who: DatabaseLogin): Promise<string[]> => {
    const ledger = await PostgresRedriveLedger.connect({ url: who.url, schema: roles.schema });
    try {
      return await ledger.rewriteRights();
    } finally {
      await ledger.close();
    }
  };

  beforeAll(async () => {
    roles = await AdminDatabaseRoles.create('rights');
    const io: CliIo = {
      env: roles.env(roles.owner),
      out: () => undefined,
      err: () => undefined,
      cwd: process.cwd(),
    };
    expect(await runMessagingCli(['db', 'migrate'], io)).toBe(0);
    await roles.grant();
  });

  afterAll(async () => {
    await asSuperuser(extra.map((role) => `drop owned by ${role}`)).catch(() => undefined);
    await asSuperuser(extra.map((role) => `drop role if exists ${role}`)).catch(() => undefined);
    await roles?.drop();
  });

  it('finds none for the recipe’s login, and the owner for the owner', async () => {
    expect(await rightsOf(roles.redrive)).toEqual([]);
    expect(await rightsOf(roles.owner)).toContainEqual(
      expect.stringMatching(/^owner of .*messaging_redrive_audit/),
    );
  });

  // claim: C-67
  it('names a NOINHERIT member of the owner role as the owner (it may SET ROLE to it)', async () => {
    const member = await login('noinherit', (role) => [
      `alter role ${role} noinherit`,
      `grant ${roles.owner.role} to ${role}`,
    ]);
    expect(await rightsOf(member)).toContainEqual(
      expect.stringMatching(/^owner of .*messaging_redrive_audit/),
    );
    // What the warning is about: this login can become the owner.
    const client = new Client({ connectionString: member.url });
    await client.connect();
    try {
      await client.query(`set role ${roles.owner.role}`);
    } finally {
      await client.end();
    }
  });

  it('names TRIGGER on the audit table and UPDATE on the nonce table and the chain head', async () => {
    const trigger = await login('trigger', (role, s) => [
      `grant trigger on ${s}.messaging_redrive_audit to ${role}`,
    ]);
    expect(await rightsOf(trigger)).toEqual(['TRIGGER']);
    const nonces = await login('nonce', (role, s) => [
      `grant update on ${s}.messaging_redrive_nonce, ${s}.messaging_redrive_audit_head to ${role}`,
    ]);
    const rights = await rightsOf(nonces);
    expect(rights).toHaveLength(2);
    expect(rights[0]).toMatch(/^UPDATE on .*messaging_redrive_nonce/);
    expect(rights[1]).toMatch(/^UPDATE on .*messaging_redrive_audit_head/);
  });
});
