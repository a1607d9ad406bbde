import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as amqp from 'amqplib';
import { Client } from 'pg';
import {
  generateApproverKeys,
  PostgresRedriveLedger,
  readApproverSigner,
  RedriveLedger,
  RedriveService,
} from 'nest-reliable-messaging/redrive';
import { CliIo, parseKeySecret, runMessagingCli, signApproval } from 'nest-reliable-messaging/testing';
import { LOCAL_KEY_SECRET } from '../../../tools/infra/local-secrets';
import { uniqueName } from '../../harness/names';
import { AdminDatabaseRoles, DatabaseLogin } from './support/admin-database-roles';
import { declareGroupQueues, depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

type Json = Record<string, unknown>;

/** An audit entry's evidence and login, read loosely (so this file also compiles against older code). */
interface Evidence {
  nonce?: string;
  signature?: string;
  keyId?: string;
  keyring?: string;
}
const evidenceOf = (entry: object) => (entry as { evidence?: Evidence }).evidence;
const loginOf = (entry: object) => (entry as { dbUser?: string }).dbUser;

/** `sha256:` of a PEM public key's SPKI DER: the key id the evidence names. */
function keyId(publicKeyPem: string): string {
  const der = Buffer.from(publicKeyPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  return `sha256:${createHash('sha256').update(der).digest('hex')}`;
}

/** The keyring's fingerprint as anyone can compute it: SHA-256 of the file's canonical JSON. */
function fingerprint(file: unknown): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((k) => [k, sorted((value as Json)[k])]),
          )
        : value;
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(sorted(file)))
    .digest('hex')}`;
}

/**
 * Issue 45, items 5 and 6: the keyring is the one the admin database pins, not the file the executor names;
 * the audit log keeps each approval's evidence (nonce, signature, key id, keyring) in its chain; an
 * execution's STARTED entry is written with its nonce, in one transaction, before anything moves; and with
 * the guide's recipe of a database login per person and for the console, one login cannot cancel another's
 * session, hide an execution by holding the log, or write an entry that does not name it.
 */
describe('Approval evidence, the pinned keyring and the STARTED entry (issue 45)', () => {
  let vhost: RabbitVhost;
  let connection: amqp.ChannelModel;
  let fixture: RedriveFixture;
  let folder: string;

  async function cli(args: string[], env: Record<string, string> = {}, now?: () => Date) {
    let out = '';
    let err = '';
    const io: CliIo = {
      env: { ...fixture.cliEnv, MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.admin), ...env },
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: folder,
      ...(now ? { now } : {}),
    };
    return { code: await runMessagingCli(args, io), out, err };
  }

  async function parked(prefix: string) {
    const destination = uniqueName(prefix);
    const workQueue = `${destination}.billing`;
    await declareGroupQueues(connection, workQueue);
    await sendToQueues(connection, [parkedOrder(destination, 'billing', 1)]);
    return { workQueue, dlq: `${workQueue}.dlq` };
  }

  /** A service like the CLI's, on `ledger`. */
  function service(ledger: RedriveLedger): RedriveService {
    return new RedriveService({
      broker: { kind: 'rabbitmq', url: vhost.url },
      credential: { principal: vhost.admin.name, secret: vhost.admin.password },
      ledger,
      approvers: fixture.approvers,
      keySecret: parseKeySecret(LOCAL_KEY_SECRET, 'LOCAL_KEY_SECRET'),
    });
  }

  const readJson = (file: string) => JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as Json;
  const writeJson = (file: string, value: unknown) =>
    writeFileSync(path.join(folder, file), JSON.stringify(value));

  beforeAll(async () => {
    fixture = await RedriveFixture.create('evidence');
    vhost = await RabbitVhost.create('evidence');
    fixture.admit(vhost.admin.name);
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
    folder = mkdtempSync(path.join(os.tmpdir(), 'redrive-evidence-'));
  });

  afterAll(async () => {
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
    await fixture?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  describe('item 6: the STARTED entry goes with the nonce', () => {
    // claim: C-104
    it('leaves a STARTED entry with the nonce and evidence when the executor dies after the move', async () => {
      const { dlq, workQueue } = await parked('started');
      // The executor "dies" after the confirms: its EXECUTE outcome is never written.
      const dying: RedriveLedger = Object.assign(Object.create(fixture.ledger) as RedriveLedger, {
        record: (entry: { outcome: string }) =>
          entry.outcome === 'REDRIVEN'
            ? Promise.reject(new Error('killed'))
            : fixture.ledger.record(entry as never),
      });
      const redrive = service(dying);
      try {
        const plan = await redrive.plan({ source: dlq });
        const approval = fixture.approval(plan);
        await expect(redrive.execute(await redrive.approve(plan, approval))).rejects.toThrow('killed');
        expect(await depthOf(connection, workQueue)).toBe(1);

        const executes = (await fixture.history(dlq)).filter((e) => e.action === 'EXECUTE');
        expect(executes.map((e) => e.outcome)).toEqual(['STARTED']);
        expect(evidenceOf(executes[0])).toMatchObject({
          nonce: approval.nonce,
          signature: approval.signature,
          keyId: keyId(fixture.keys.jane.publicKey.publicKey),
          keyring: fingerprint(fixture.keyringFile),
        });
        expect((await fixture.ledger.verifyChain()).intact).toBe(true);
        // `dlq history` names it.
        const history = await cli(['dlq', 'history', '--source', dlq]);
        expect(history.out).toContain('STARTED with no outcome');
      } finally {
        await redrive.close();
      }
    });
  });

  describe('item 5: the reviewed keyring is pinned; approvals keep their evidence', () => {
    // claim: C-103
    it('refuses an executor’s own keyring file once the admin database pins the reviewed one', async () => {
      const { dlq } = await parked('pinned');
      expect((await cli(['dlq', 'plan', '--source', dlq, '--out', 'pinned.json'])).code).toBe(0);
      // As the owner: the reviewed keyring pinned.
      const pin = await cli(['db', 'pin-keyring']);
      expect(pin.err).toBe('');
      expect(pin.code).toBe(0);

      // The executor's own file: "bob" with the executor's key, an approval signed as bob with it.
      const mallory = generateApproverKeys('bob');
      const mine = fixture.keyringFile as { version: 2; people: Array<{ name: string; publicKey?: string }> };
      writeJson('mine.json', {
        ...mine,
        people: mine.people.map((p) =>
          p.name === 'bob' ? { ...p, publicKey: mallory.publicKey.publicKey } : p,
        ),
      });
      const forged = signApproval(
        readJson('pinned.json') as never,
        readApproverSigner(mallory.privateKeyFile),
        {},
        new Date(),
      );
      writeJson('forged.approval.json', forged);
      const run = await cli(
        ['dlq', 'redrive', '--plan', 'pinned.json', '--approval', 'forged.approval.json'],
        { MESSAGING_ADMIN_APPROVERS: path.join(folder, 'mine.json') },
      );
      expect(run.code).toBe(2);
      expect(run.err).toContain('is not the reviewed one the admin database pins');
      expect(await depthOf(connection, dlq)).toBe(1);
      const refusals = (await fixture.history(dlq)).filter((e) => e.action === 'REFUSE');
      expect(refusals.map((e) => e.outcome)).toContain('KEYRING_NOT_PINNED');
    });

    // claim: C-114
    it('refuses an approval dated later than its APPROVE entry (the database time), finding 14', async () => {
      const { dlq, workQueue } = await parked('postdated');
      expect((await cli(['dlq', 'plan', '--source', dlq, '--out', 'pd.json'])).code).toBe(0);
      expect((await cli(['db', 'pin-keyring'])).code).toBe(0);
      const month = () => new Date(Date.now() + 30 * 24 * 3_600_000);
      const key = path.join(fixture.folder, 'jane.key.json');
      const approve = ['dlq', 'approve', '--plan', 'pd.json', '--key', key, '--out', 'pd.approval.json'];
      expect((await cli(approve, {}, month)).code).toBe(0);
      const approval = readJson('pd.approval.json');
      const recordedAt = await fixture.ledger.approvalRecordedAt(String(approval.nonce));
      expect(Math.abs(recordedAt!.getTime() - Date.now())).toBeLessThan(60_000);
      const run = await cli(
        ['dlq', 'redrive', '--plan', 'pd.json', '--approval', 'pd.approval.json'],
        {},
        month,
      );
      expect(run.code).toBe(2);
      expect(run.err).toContain('dated later than the audit log recorded it');
      expect(await depthOf(connection, workQueue)).toBe(0);
      expect(await depthOf(connection, dlq)).toBe(1);
    });

    // claim: C-103
    it('keeps nonce, signature, key id and keyring in the APPROVE and EXECUTE entries, in the chain', async () => {
      const { dlq, workQueue } = await parked('evidence');
      expect((await cli(['dlq', 'plan', '--source', dlq, '--out', 'ev.json'])).code).toBe(0);
      expect((await cli(['db', 'pin-keyring'])).code).toBe(0);
      const key = path.join(fixture.folder, 'jane.key.json');
      const approve = await cli([
        'dlq',
        'approve',
        '--plan',
        'ev.json',
        '--key',
        key,
        '--out',
        'ev.approval.json',
      ]);
      expect(RedriveFixture.withoutRewriteWarning(approve.err)).toBe('');
      const approval = readJson('ev.approval.json');
      const run = await cli(['dlq', 'redrive', '--plan', 'ev.json', '--approval', 'ev.approval.json']);
      expect(RedriveFixture.withoutRewriteWarning(run.err)).toBe('');
      expect(run.code).toBe(0);
      expect(await depthOf(connection, workQueue)).toBe(1);

      const expected = {
        nonce: approval.nonce,
        signature: approval.signature,
        approvedAt: approval.approvedAt,
        expiresAt: approval.expiresAt,
        keyId: keyId(fixture.keys.jane.publicKey.publicKey),
        keyring: fingerprint(fixture.keyringFile),
      };
      const entries = (await fixture.history(dlq)).filter((e) => e.action !== 'PLAN');
      expect(entries.map((e) => [e.action, e.outcome])).toEqual([
        ['APPROVE', 'APPROVED'],
        ['EXECUTE', 'STARTED'],
        ['EXECUTE', 'REDRIVEN'],
      ]);
      for (const entry of entries) expect(evidenceOf(entry)).toEqual(expected);
      expect((await fixture.ledger.verifyChain()).intact).toBe(true);

      // The evidence is in the chain: a change to it, by whoever may switch the triggers off, shows.
      const db = new Client({ connectionString: fixture.schema.databaseUrl });
      await db.connect();
      try {
        const table = `"${fixture.schema.name}".messaging_redrive_audit`;
        await db.query(`alter table ${table} disable trigger messaging_redrive_audit_append_only`);
        await db.query(
          `update ${table} set evidence = replace(evidence, $1, $2) where action = 'APPROVE' and plan_hash = $3`,
          [String(approval.signature), 'forged', String(approval.planHash)],
        );
        await db.query(`alter table ${table} enable trigger messaging_redrive_audit_append_only`);
      } finally {
        await db.end();
      }
      const check = await fixture.ledger.verifyChain();
      expect(check.intact).toBe(false);
    });
  });

  describe('item 6: a database login per person and for the console (the guide’s recipe)', () => {
    let roles: AdminDatabaseRoles;
    let consoleLogin: DatabaseLogin;
    let bobLogin: DatabaseLogin;
    let consoleLedger: PostgresRedriveLedger;

    beforeAll(async () => {
      roles = await AdminDatabaseRoles.create('evroles');
      await PostgresRedriveLedger.migrate({ url: roles.owner.url, schema: roles.schema });
      await roles.grant();
      consoleLogin = await roles.person('console');
      bobLogin = await roles.person('bob', 2_000);
      consoleLedger = await PostgresRedriveLedger.connect({ url: consoleLogin.url, schema: roles.schema });
    });

    afterAll(async () => {
      await consoleLedger?.close();
      await roles?.drop();
    });

    // claim: C-104
    it('one login cannot cancel or terminate another’s session', async () => {
      const asConsole = await roles.connect(consoleLogin);
      const asBob = await roles.connect(bobLogin);
      try {
        const [{ pid }] = (await asConsole.query('select pg_backend_pid() as pid')).rows as Array<{
          pid: number;
        }>;
        await expect(asBob.query('select pg_cancel_backend($1)', [pid])).rejects.toThrow(
          /permission denied|must be/,
        );
        await expect(asBob.query('select pg_terminate_backend($1)', [pid])).rejects.toThrow(
          /permission denied|must be/,
        );
        expect((await asConsole.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
      } finally {
        await asConsole.end();
        await asBob.end();
      }
    });

    // claim: C-104
    it('an entry one login writes under another actor names the login that wrote it, in the chain', async () => {
      const asBob = await roles.connect(bobLogin);
      try {
        await asBob.query(
          `insert into messaging_redrive_audit (action, actor, transport, outcome, detail)
           values ('APPROVE', 'jane', 'rabbitmq', 'APPROVED', 'forged by bob')`,
        );
      } finally {
        await asBob.end();
      }
      const [forged] = (await consoleLedger.history({ actor: 'jane', limit: 1 })).filter(
        (e) => e.detail === 'forged by bob',
      );
      expect(loginOf(forged)).toBe(bobLogin.role);
      expect((await consoleLedger.verifyChain()).intact).toBe(true);
    });

    // claim: C-104
    it('ends a login’s idle transaction that holds the log (the recipe’s timeout)', async () => {
      const asBob = await roles.connect(bobLogin);
      asBob.on('error', () => undefined);
      await asBob.query('begin');
      await asBob.query(
        `insert into messaging_redrive_audit (action, actor, transport, outcome) values ('ACCESS', 'bob', 'rabbitmq', 'HOLD')`,
      );
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await expect(asBob.query('select 1')).rejects.toThrow();
      await asBob.end().catch(() => undefined);
      // The console's entries go on.
      await consoleLedger.record({
        action: 'ACCESS',
        actor: 'console',
        transport: 'rabbitmq',
        outcome: 'OK',
      });
    });

    // claim: C-104
    it('a login that holds the log (its timeout switched off) cannot hide an execution: nothing moves', async () => {
      const { dlq, workQueue } = await parked('held');
      const redrive = service(consoleLedger);
      const asBob = await roles.connect(bobLogin);
      try {
        const plan = await redrive.plan({ source: dlq });
        const approved = await redrive.approve(plan, fixture.approval(plan));
        await asBob.query('set idle_in_transaction_session_timeout = 0');
        await asBob.query('begin');
        await asBob.query(
          `insert into messaging_redrive_audit (action, actor, transport, outcome) values ('ACCESS', 'bob', 'rabbitmq', 'HOLD')`,
        );
        const outcome = await Promise.race([
          redrive.execute(approved).then(
            () => 'ran',
            () => 'refused',
          ),
          new Promise((resolve) => setTimeout(() => resolve('waiting'), 20_000)),
        ]);
        // Moved while the log was held (and its entry would come later, or never) is what must not happen.
        expect({ outcome, moved: await depthOf(connection, workQueue) }).toEqual({
          outcome: 'refused',
          moved: 0,
        });
        expect(await depthOf(connection, dlq)).toBe(1);
        await asBob.query('rollback');
        const asConsole = await roles.connect(consoleLogin);
        try {
          const used = await asConsole.query('select 1 from messaging_redrive_nonce where plan_hash = $1', [
            plan.hash,
          ]);
          expect(used.rowCount).toBe(0);
        } finally {
          await asConsole.end();
        }
      } finally {
        await asBob.query('rollback').catch(() => undefined);
        await asBob.end();
        await redrive.close();
      }
    }, 60_000);
  });
});
