import { Client } from 'pg';
import { PostgresRedriveLedger } from 'nest-reliable-messaging/redrive';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { AdminDatabaseRoles } from './support/admin-database-roles';

/**
 * Issue 28, item 4: the audit log is append-only for the login the CLI and the console use, not by
 * convention. The admin database is set up by the guide's recipe: an owner role runs the migrations, the
 * CLI's and console's role may SELECT and INSERT only; the database sets each entry's id and time and
 * chains it to the one before by hash; `dlq history --verify` finds what a superuser changed.
 */
describe('The audit log as the console’s database login (issue 28)', () => {
  let roles: AdminDatabaseRoles;
  let ledger: PostgresRedriveLedger;
  let asRedrive: Client;
  let asOwner: Client;

  async function cli(args: string[], env: Record<string, string>) {
    let out = '';
    let err = '';
    const io: CliIo = {
      env,
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: process.cwd(),
    };
    return { code: await runMessagingCli(args, io), out, err };
  }

  const entry = (actor: string, detail: string) =>
    ledger.record({
      action: 'PLAN',
      actor,
      transport: 'rabbitmq',
      source: 'orders.billing.dlq',
      target: 'orders.billing',
      planHash: `sha256:${'ab'.repeat(32)}`,
      messageIds: ['0190a1b2-0000-7000-8000-000000000001', null],
      outcome: 'PLANNED',
      detail,
    });

  beforeAll(async () => {
    roles = await AdminDatabaseRoles.create('audit');
    // As the owner: the migrations, then what the CLI's and console's login may do.
    expect((await cli(['db', 'migrate'], roles.env(roles.owner))).code).toBe(0);
    await roles.grant();
    ledger = await PostgresRedriveLedger.connect({ url: roles.redrive.url, schema: roles.schema });
    asRedrive = await roles.connect(roles.redrive);
    asOwner = await roles.connect(roles.owner);
  });

  afterAll(async () => {
    await asRedrive?.end();
    await asOwner?.end();
    await ledger?.close();
    await roles?.drop();
  });

  it('lets the login append and read, and nothing else', async () => {
    await entry('ops-jürgen', 'first: 2 of 3 "waiting"\n— 東京 🚚');
    const used = await ledger.claimApproval({
      nonce: 'AAAAAAAAAAAAAAAAAAAAAA',
      planHash: 'sha256:00',
      approver: 'jane',
      redriveId: '0190a1b2-0000-7000-8000-0000000000ff',
      executedBy: 'ops-alice',
    });
    expect(used).toEqual({ claimed: true });
    const refused = [
      "update messaging_redrive_audit set detail = 'rewritten'",
      'delete from messaging_redrive_audit',
      'truncate messaging_redrive_audit',
      'alter table messaging_redrive_audit disable trigger all',
      'drop trigger messaging_redrive_audit_append_only on messaging_redrive_audit',
      'drop trigger messaging_redrive_audit_chain on messaging_redrive_audit',
      'delete from messaging_redrive_nonce',
      'truncate messaging_redrive_nonce',
      'update messaging_redrive_audit_head set last_id = 0',
      'drop table messaging_redrive_audit',
    ];
    for (const sql of refused) {
      await expect(asRedrive.query(sql).then(() => `${sql}: done`)).rejects.toThrow(
        /permission denied|must be owner/,
      );
    }
    expect(await ledger.history({ limit: 10 })).toMatchObject([{ actor: 'ops-jürgen' }]);
  });

  it('sets id and time in the database: a back-dated insert lands last, at the database’s now', async () => {
    const [{ now }] = (await asRedrive.query<{ now: Date }>('select now() as now')).rows;
    await asRedrive.query(
      `insert into messaging_redrive_audit (id, at, action, actor, transport, outcome)
       overriding system value values (1, '2001-01-01T00:00:00Z', 'EXECUTE', 'mallory', 'rabbitmq', 'REDRIVEN')`,
    );
    const latest = (await ledger.history({ limit: 1 }))[0];
    expect(latest).toMatchObject({ actor: 'mallory' });
    expect(Number(latest.id)).toBeGreaterThan(1);
    expect(latest.at.getTime()).toBeGreaterThanOrEqual(now.getTime() - 1);
  });

  // claim: C-67
  it('refuses TRUNCATE and DELETE even to the owner, and UPDATE and DELETE of a used approval', async () => {
    for (const sql of [
      'truncate messaging_redrive_audit',
      'delete from messaging_redrive_audit',
      'truncate messaging_redrive_nonce',
      'delete from messaging_redrive_nonce',
      "update messaging_redrive_nonce set executed_by = 'nobody'",
    ]) {
      await expect(asOwner.query(sql)).rejects.toThrow(/append-only/);
    }
  });

  it('keeps one chain when entries are written at once', async () => {
    await Promise.all(Array.from({ length: 30 }, (_, i) => entry(`ops-${i % 3}`, `concurrent ${i}`)));
    const check = await ledger.verifyChain();
    expect(check).toMatchObject({ intact: true, checked: 32 });
    const ids = (await ledger.history({ limit: 100 })).map((e) => Number(e.id));
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => ids[0] + i));
  });

  // claim: C-67
  it('dlq history --verify passes as written, warns a login that could rewrite it, and finds a superuser’s edit', async () => {
    const verify = ['dlq', 'history', '--verify', '--limit', '1'];
    const intact = await cli(verify, roles.env(roles.redrive));
    expect(intact.code).toBe(0);
    expect(intact.out).toContain('Audit chain intact: 32 entries.');
    expect(intact.out).not.toContain('Warning');
    expect((await cli(verify, roles.env(roles.owner))).out).toContain('Warning: this login can rewrite');

    // Someone with the power to switch the triggers off changes an old entry.
    const superuser = await roles.connect('superuser');
    try {
      await superuser.query('set session_replication_role = replica');
      await superuser.query(`update messaging_redrive_audit set detail = 'nothing happened' where id = 2`);
      // And, separately, a later one: the first break must not hide it (issue 45 item 2).
      await superuser.query(`update messaging_redrive_audit set actor = 'mallory' where id = 20`);
    } finally {
      await superuser.end();
    }
    const broken = await cli(verify, roles.env(roles.redrive));
    expect(broken.code).toBe(1);
    expect(broken.out).toContain('Audit chain BROKEN in 2 places');
    expect(broken.out).toContain('BROKEN at entry 2: its fields no longer give its hash');
    expect(broken.out).toContain('BROKEN at entry 20: its fields no longer give its hash');
    expect(broken.err).toContain('hash chain is broken at entries 2, 20');
    expect(await ledger.verifyChain({ last: 5 })).toMatchObject({ intact: true });
    const check = await ledger.verifyChain({ last: 40 });
    expect(check).toMatchObject({ intact: false, brokenAt: '2' });
    expect(!check.intact && check.breaks.map((b) => b.entry)).toEqual(['2', '20']);
    const whole = await ledger.verifyChain();
    expect(!whole.intact && whole.breaks.map((b) => b.entry)).toEqual(['2', '20']);
  });

  it('hashes ids that are not strings as the database does: no false break (issue 45 item 2)', async () => {
    for (const ids of ['[[1,2]]', '[1.50]', '[{"a": 1}, true]']) {
      await asRedrive.query(
        `insert into messaging_redrive_audit (action, actor, transport, outcome, message_ids)
         values ('ACCESS', 'x', 'kafka', 'X', $1::jsonb)`,
        [ids],
      );
    }
    await entry('ops-after', 'after the odd ids');
    expect(await ledger.verifyChain({ last: 4 })).toMatchObject({ intact: true, checked: 4 });
  });
});
