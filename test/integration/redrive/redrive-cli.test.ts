import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as amqp from 'amqplib';
import { CliIo } from 'nest-reliable-messaging/testing';
import { runMessagingCli } from 'nest-reliable-messaging/testing';
import { uniqueName } from '../../harness/names';
import { declareGroupQueues, depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

/** `messaging dlq list | plan | approve | redrive` in-process against RabbitMQ, with its exit codes. */
describe('messaging dlq (CLI) on RabbitMQ', () => {
  let vhost: RabbitVhost;
  let connection: amqp.ChannelModel;
  let folder: string;
  let fixture: RedriveFixture;
  const destination = uniqueName('cli_orders');
  const workQueue = `${destination}.billing`;
  const dlq = `${workQueue}.dlq`;

  /** Runs the CLI as the admin (or with `env` instead), with a clock `offsetMs` ahead; returns code and output. */
  async function cli(args: string[], options: { env?: Record<string, string>; offsetMs?: number } = {}) {
    let out = '';
    let err = '';
    const io: CliIo = {
      env: { ...fixture.cliEnv, ...(options.env ?? { MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.admin) }) },
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: folder,
      now: () => new Date(Date.now() + (options.offsetMs ?? 0)),
    };
    const code = await runMessagingCli(args, io);
    return { code, out, err };
  }

  beforeAll(async () => {
    fixture = await RedriveFixture.create('redrive_cli');
    vhost = await RabbitVhost.create('redrive_cli');
    fixture.admit(vhost.admin.name);
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
    folder = mkdtempSync(path.join(os.tmpdir(), 'redrive-cli-'));
    await declareGroupQueues(connection, workQueue);
    await sendToQueues(
      connection,
      [1, 2].map((seq) => parkedOrder(destination, 'billing', seq)),
    );
  });

  afterAll(async () => {
    await fixture?.close();
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
    rmSync(folder, { recursive: true, force: true });
  });

  it('lists the dead-letter queue and its depth', async () => {
    const { code, out } = await cli(['dlq', 'list', '--queue', dlq, `${dlq}.missing`]);
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`${dlq}\\s+2\\s+0`));
    expect(out).toMatch(/missing\s+not found/);
  });

  // claim: C-61
  it('exits with 2 when a guard refuses: no credential, the service user, 101, source = target', async () => {
    const noCredential = { MESSAGING_ADMIN_AMQP_URL: vhost.url };
    expect((await cli(['dlq', 'plan', '--source', dlq], { env: noCredential })).code).toBe(2);
    const service = { MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.service) };
    const refused = await cli(['dlq', 'plan', '--source', dlq], { env: service });
    expect(refused).toMatchObject({ code: 2 });
    expect(RedriveFixture.withoutRewriteWarning(refused.err)).toMatch(/^Refused: The broker refused/);
    expect((await cli(['dlq', 'plan', '--source', dlq, '--limit', '101'])).code).toBe(2);
    expect((await cli(['dlq', 'plan', '--source', dlq, '--target', dlq])).code).toBe(2);
    expect((await cli(['dlq', 'plan'])).code).toBe(1); // --source missing: a usage error
    expect(await depthOf(connection, dlq)).toBe(2);
  });

  it('plans, approves and redrives; refuses an expired approval', async () => {
    const plan = await cli(['dlq', 'plan', '--source', dlq, '--out', 'plan.json']);
    expect(plan.code).toBe(0);
    expect(plan.out).toContain(`Dry run on rabbitmq: ${dlq} -> ${workQueue}`);
    expect(plan.out).toContain('2 of 2 waiting message(s) would be redriven. Nothing was changed.');

    const key = path.join(fixture.folder, 'jane.key.json');
    const approve = await cli(['dlq', 'approve', '--plan', 'plan.json', '--key', key, '--ttl', '10m']);
    expect(approve.code).toBe(0);
    expect(approve.out).toContain('Approval written to plan.approval.json');
    const approval = JSON.parse(readFileSync(path.join(folder, 'plan.approval.json'), 'utf8')) as {
      approver: string;
    };
    expect(approval.approver).toBe('jane');

    const args = ['dlq', 'redrive', '--plan', 'plan.json', '--approval', 'plan.approval.json'];
    const late = await cli(args, { offsetMs: 11 * 60_000 });
    expect(late.code).toBe(2);
    expect(late.err).toContain('The approval expired');
    expect(await depthOf(connection, dlq)).toBe(2);

    const run = await cli(args);
    expect(run.code).toBe(0);
    expect(run.out).toContain(`2 message(s) redriven; 0 left in ${dlq}.`);
    expect(await depthOf(connection, dlq)).toBe(0);
    expect(await depthOf(connection, workQueue)).toBe(2);

    const again = await cli(args);
    expect(again.code).toBe(2); // the approval was used
    expect(again.err).toContain('already executed');

    // Everything above is in the audit log, and `dlq history` shows it.
    const history = await cli(['dlq', 'history', '--source', dlq]);
    expect(history.code).toBe(0);
    const rows = history.out.split('\n').slice(1).filter(Boolean);
    expect(
      // ACTION, WHO and OUTCOME (the fixture's login adds an OVERRIDES column after it: rewrite-rights).
      rows.map((row) => {
        const cells = row.split(/\s{2,}/);
        return [cells[1], cells[2], cells[7]];
      }),
    ).toEqual([
      ['REFUSE', '(no credential)', 'ADMIN_CREDENTIAL'],
      ['REFUSE', vhost.service.name, 'ADMIN_CREDENTIAL'],
      ['REFUSE', vhost.admin.name, 'BATCH_LIMIT'],
      ['REFUSE', vhost.admin.name, 'SAME_SOURCE_AND_TARGET'],
      ['PLAN', vhost.admin.name, 'PLANNED'],
      ['APPROVE', 'jane', 'APPROVED'],
      ['REFUSE', vhost.admin.name, 'APPROVAL_EXPIRED'],
      ['EXECUTE', vhost.admin.name, 'STARTED'], // with the nonce, before anything moved (issue 45)
      ['EXECUTE', vhost.admin.name, 'REDRIVEN'],
      ['REFUSE', vhost.admin.name, 'APPROVAL_USED'],
    ]);
  });
});
