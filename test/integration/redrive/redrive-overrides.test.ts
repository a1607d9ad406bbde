import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { INestApplication, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import * as amqp from 'amqplib';
import { Client } from 'pg';
import { MemoryConsolePlanStore, MessagingConsoleModule } from 'nest-reliable-messaging/console';
import { PostgresRedriveLedger, RedriveLedger } from 'nest-reliable-messaging/redrive';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { uniqueName } from '../../harness/names';
import { AdminDatabaseRoles } from './support/admin-database-roles';
import { declareGroupQueues, depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

/** An entry's overrides, read loosely (so this file also compiles against code without them). */
const overridesOf = (entry: object): readonly string[] =>
  (entry as { overrides?: readonly string[] }).overrides ?? [];

/**
 * `url` with its host written `127.1`: 127.0.0.1 to the resolver, but not one of the spellings the loopback
 * check accepts (127.0.0.0/8 in dotted quads, ::1, localhost), so it stands for a host not on this machine.
 */
function remote(url: string): string {
  const parsed = new URL(url);
  parsed.hostname = '127.1';
  return parsed.toString();
}

/**
 * Issue 45, findings 11, 13 and 14: a run that skipped a safety check says so in every audit entry it
 * writes, in the chain (`--insecure-transport`); the CLI and the console refuse a database login that can
 * rewrite the audit log unless told to go on, which is recorded; and the topology a route-ambiguous DLQ
 * takes its target from is pinned in the admin database like the keyring.
 */
describe('Overrides in the audit log, rewritable logins, the pinned topology (issue 45)', () => {
  let vhost: RabbitVhost;
  let connection: amqp.ChannelModel;
  let fixture: RedriveFixture;
  let folder: string;

  async function cli(args: string[], env: Record<string, string> = {}, on: RedriveFixture = fixture) {
    let out = '';
    let err = '';
    const io: CliIo = {
      env: { ...on.cliEnv, MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.admin), ...env },
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: folder,
    };
    return { code: await runMessagingCli(args, io), out, err };
  }

  async function parked(prefix: string, destination = uniqueName(prefix)) {
    const workQueue = `${destination}.billing`;
    await declareGroupQueues(connection, workQueue);
    await sendToQueues(connection, [parkedOrder(destination, 'billing', 1)]);
    return { destination, workQueue, dlq: `${workQueue}.dlq` };
  }

  const approve = (plan: string, env: Record<string, string> = {}, extra: string[] = [], on = fixture) =>
    cli(
      ['dlq', 'approve', '--plan', plan, '--key', path.join(on.folder, 'jane.key.json'), ...extra],
      env,
      on,
    );

  beforeAll(async () => {
    fixture = await RedriveFixture.create('overrides');
    vhost = await RabbitVhost.create('overrides');
    fixture.admit(vhost.admin.name);
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
    folder = mkdtempSync(path.join(os.tmpdir(), 'redrive-overrides-'));
  });

  afterAll(async () => {
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
    await fixture?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  describe('finding 11: --insecure-transport is recorded', () => {
    it('puts the override in every entry of a run that used it, in the chain, and in dlq history', async () => {
      const { dlq, workQueue } = await parked('insecure');
      const broker = { MESSAGING_ADMIN_AMQP_URL: remote(vhost.urlAs(vhost.admin)) };
      const refused = await cli(['dlq', 'plan', '--source', dlq], broker);
      expect(refused.code).not.toBe(0);
      expect(refused.err).toContain('clear text');

      const plan = await cli(
        ['dlq', 'plan', '--source', dlq, '--out', 'ins.json', '--insecure-transport'],
        broker,
      );
      expect(plan.code).toBe(0);
      // The approver reaches the admin database in clear text (no broker: the variable is the override).
      const database = {
        MESSAGING_ADMIN_DATABASE_URL: remote(fixture.cliEnv.MESSAGING_ADMIN_DATABASE_URL),
        MESSAGING_ADMIN_INSECURE_TRANSPORT: 'true',
      };
      expect((await approve('ins.json', database, ['--out', 'ins.approval.json'])).code).toBe(0);
      const run = await cli(
        ['dlq', 'redrive', '--plan', 'ins.json', '--approval', 'ins.approval.json', '--insecure-transport'],
        broker,
      );
      expect(run.code).toBe(0);
      expect(await depthOf(connection, workQueue)).toBe(1);

      const entries = (await fixture.history(dlq)).filter((e) => e.action !== 'REFUSE');
      expect(entries.map((e) => [e.action, e.outcome])).toEqual([
        ['PLAN', 'PLANNED'],
        ['APPROVE', 'APPROVED'],
        ['EXECUTE', 'STARTED'],
        ['EXECUTE', 'REDRIVEN'],
      ]);
      for (const entry of entries) expect(overridesOf(entry)).toContain('insecure-transport');
      expect((await fixture.ledger.verifyChain()).intact).toBe(true);

      const history = await cli(['dlq', 'history', '--source', dlq]);
      expect(history.out).toContain('OVERRIDES');
      expect(history.out).toContain('insecure-transport');

      // In the chain: whoever may switch the triggers off and drops the override breaks it.
      const db = new Client({ connectionString: fixture.schema.databaseUrl });
      await db.connect();
      try {
        const table = `"${fixture.schema.name}".messaging_redrive_audit`;
        await db.query(`alter table ${table} disable trigger messaging_redrive_audit_append_only`);
        await db.query(
          `update ${table} set overrides = null where source = $1 and action = 'PLAN' and outcome = 'PLANNED'`,
          [dlq],
        );
        await db.query(`alter table ${table} enable trigger messaging_redrive_audit_append_only`);
      } finally {
        await db.end();
      }
      expect((await fixture.ledger.verifyChain()).intact).toBe(false);
    });
  });

  describe('finding 13: a database login that can rewrite the audit log', () => {
    let roles: AdminDatabaseRoles;
    /** As the owner, with the fixture's keyring (the fixture's own override taken away). */
    let asOwner: Record<string, string>;
    let asRecipe: Record<string, string>;

    beforeAll(async () => {
      roles = await AdminDatabaseRoles.create('rewritable');
      await PostgresRedriveLedger.migrate({ url: roles.owner.url, schema: roles.schema });
      await roles.grant();
      asOwner = { ...roles.env(roles.owner), MESSAGING_ADMIN_ALLOW_REWRITABLE_AUDIT: '' };
      asRecipe = { ...roles.env(roles.redrive), MESSAGING_ADMIN_ALLOW_REWRITABLE_AUDIT: '' };
    });

    afterAll(async () => {
      await roles?.drop();
    });

    const historyAs = async (dlq: string) => {
      const ledger = await PostgresRedriveLedger.connect({ url: roles.owner.url, schema: roles.schema });
      try {
        return await ledger.history({ source: dlq, limit: 100 });
      } finally {
        await ledger.close();
      }
    };

    it('the CLI refuses to plan, approve or redrive as such a login unless told to, warns, and records it', async () => {
      const { dlq } = await parked('rewritable');
      const refused = await cli(['dlq', 'plan', '--source', dlq], asOwner);
      expect(refused.code).toBe(2);
      expect(refused.err).toContain('can rewrite the audit log');
      expect(await historyAs(dlq)).toEqual([]);

      // The recipe's login (SELECT and INSERT only) plans without a word; the owner may not approve it.
      const recipe = await cli(['dlq', 'plan', '--source', dlq, '--out', 'rw.json'], asRecipe);
      expect(recipe.err).toBe('');
      expect(recipe.code).toBe(0);
      const ownerApproves = await approve('rw.json', asOwner, ['--out', 'rw.approval.json']);
      expect(ownerApproves.code).toBe(2);
      expect(ownerApproves.err).toContain('can rewrite the audit log');

      const told = await cli(['dlq', 'plan', '--source', dlq, '--allow-rewritable-audit'], asOwner);
      expect(told.code).toBe(0);
      expect(told.err).toContain('WARNING: this admin database login can rewrite the audit log');
      const plans = (await historyAs(dlq)).filter((e) => e.action === 'PLAN');
      expect(plans.map((e) => [e.dbUser, overridesOf(e)])).toEqual([
        [roles.redrive.role, []],
        [roles.owner.role, ['rewrite-rights']],
      ]);
    });

    it('local development (--local-plaintext, brokers on this machine) accepts such a login as the override does', async () => {
      const { dlq } = await parked('rewritable_local');
      const local = await cli(['dlq', 'plan', '--source', dlq, '--local-plaintext'], asOwner);
      expect(local.code).toBe(0);
      expect(local.err).toContain('only because of --local-plaintext (local development)');
      const plans = (await historyAs(dlq)).filter((e) => e.action === 'PLAN');
      expect(plans.map((e) => [e.dbUser, overridesOf(e)])).toEqual([[roles.owner.role, ['rewrite-rights']]]);
    });

    it('the console refuses to start on such a login unless allowRewritableAudit, which it logs and records', async () => {
      const start = async (ledger: RedriveLedger, allowRewritableAudit?: boolean) => {
        const app: INestApplication = await NestFactory.create(
          MessagingConsoleModule.forRoot({
            path: 'console',
            redrive: fixture.service(
              { kind: 'rabbitmq', url: vhost.url },
              { principal: vhost.admin.name, secret: vhost.admin.password },
            ),
            ledger,
            authenticator: { authenticate: () => Promise.resolve(undefined) },
            deadLetterQueues: [],
            planStore: new MemoryConsolePlanStore(),
            // (An object, so that this file compiles against code without the option.)
            ...(allowRewritableAudit ? ({ allowRewritableAudit } as object) : {}),
          }),
          { logger: false, abortOnError: false },
        );
        await app.init().catch(async (error: unknown) => {
          await app.close().catch(() => undefined);
          throw error;
        });
        return app;
      };
      const owner = await PostgresRedriveLedger.connect({ url: roles.owner.url, schema: roles.schema });
      const recipe = await PostgresRedriveLedger.connect({ url: roles.redrive.url, schema: roles.schema });
      const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      try {
        await expect(start(owner)).rejects.toThrow(/can rewrite the audit log/);
        await (await start(recipe)).close();
        expect(logged).not.toHaveBeenCalled();

        await (await start(owner, true)).close();
        expect(logged).toHaveBeenCalledWith(expect.stringContaining('OVERRIDE'));
        const source = uniqueName('console-start');
        await owner.record({
          action: 'ACCESS',
          actor: 'console',
          transport: 'rabbitmq',
          source,
          outcome: 'OK',
        });
        expect((await historyAs(source)).map(overridesOf)).toEqual([['rewrite-rights']]);
      } finally {
        logged.mockRestore();
        await owner.close();
        await recipe.close();
      }
    });
  });

  describe('finding 14: the topology is pinned like the keyring', () => {
    let pinned: RedriveFixture;

    beforeAll(async () => {
      pinned = await RedriveFixture.create('pintopo');
      pinned.admit(vhost.admin.name);
    });

    afterAll(async () => {
      await pinned?.close();
    });

    it('refuses an executor whose topology file differs from the pinned one, or who names none', async () => {
      // `<x>.orders.billing.dlq` reads two ways: its route comes from the topology.
      const { destination, dlq, workQueue } = await parked('pin', `${uniqueName('pin')}.orders`);
      const reviewed = { destinations: [destination], groups: [{ group: 'billing', destination }] };
      const edited = {
        ...reviewed,
        groups: [...reviewed.groups, { group: 'audit', destination, retryTiersMs: [60_000] }],
      };
      writeFileSync(path.join(folder, 'reviewed.json'), JSON.stringify(reviewed));
      writeFileSync(path.join(folder, 'edited.json'), JSON.stringify(edited));
      const topology = (file: string) => ['--topology', file];

      const plan = await cli(
        ['dlq', 'plan', '--source', dlq, '--out', 'pt.json', ...topology('reviewed.json')],
        {},
        pinned,
      );
      expect(plan.code).toBe(0);
      const approved = await approve(
        'pt.json',
        {},
        ['--out', 'pt.approval.json', ...topology('reviewed.json')],
        pinned,
      );
      expect(approved.code).toBe(0);
      const pin = await cli(['db', 'pin-topology', ...topology('reviewed.json')], {}, pinned);
      expect(pin.err).toBe('');
      expect(pin.out).toMatch(/Pinned the topology sha256:[0-9a-f]{64}/);

      const redrive = ['dlq', 'redrive', '--plan', 'pt.json', '--approval', 'pt.approval.json'];
      const mine = await cli([...redrive, ...topology('edited.json')], {}, pinned);
      expect(mine.code).toBe(2);
      expect(mine.err).toContain('is not the reviewed one the admin database pins');
      const none = await cli(redrive, {}, pinned);
      expect(none.code).toBe(2);
      expect(none.err).toContain('the topology in use (none)');
      expect(await depthOf(connection, dlq)).toBe(1);
      expect(await depthOf(connection, workQueue)).toBe(0);
      const refusals = (await pinned.history(dlq)).filter((e) => e.action === 'REFUSE');
      expect(refusals.map((e) => e.outcome)).toContain('TOPOLOGY_NOT_PINNED');

      const reviewedRun = await cli([...redrive, ...topology('reviewed.json')], {}, pinned);
      expect(reviewedRun.code).toBe(0);
      expect(await depthOf(connection, workQueue)).toBe(1);
    });
  });
});
