import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as amqp from 'amqplib';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { uniqueName } from '../../harness/names';
import { declareGroupQueues, depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

/** `nest-messaging dlq edit`, then `dlq approve` and `dlq redrive` of the edit plan, in-process on RabbitMQ. */
describe('messaging dlq edit (CLI) on RabbitMQ', () => {
  let vhost: RabbitVhost;
  let connection: amqp.ChannelModel;
  let folder: string;
  let fixture: RedriveFixture;
  const destination = uniqueName('cli_edit');
  const workQueue = `${destination}.billing`;
  const dlq = `${workQueue}.dlq`;
  const parked = parkedOrder(destination, 'billing', 1);
  const id = parked.headers['msg.id'];
  const original = JSON.parse(parked.body.toString()) as Record<string, unknown>;
  const events = path.join(__dirname, 'support', 'order-events.cjs');

  async function cli(args: string[]) {
    let out = '';
    let err = '';
    const io: CliIo = {
      env: { ...fixture.cliEnv, MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.admin) },
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: folder,
    };
    return { code: await runMessagingCli(args, io), out, err };
  }

  const payloadFile = (name: string, payload: unknown) => {
    writeFileSync(path.join(folder, name), JSON.stringify(payload));
    return name;
  };

  beforeAll(async () => {
    fixture = await RedriveFixture.create('redrive_edit_cli');
    vhost = await RabbitVhost.create('redrive_edit_cli');
    fixture.admit(vhost.admin.name);
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
    folder = mkdtempSync(path.join(os.tmpdir(), 'redrive-edit-cli-'));
    await declareGroupQueues(connection, workQueue);
    await sendToQueues(connection, [parked]);
  });

  afterAll(async () => {
    await fixture?.close();
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
    rmSync(folder, { recursive: true, force: true });
  });

  it('refuses locked headers, a payload its schema refuses, and an unchecked edit not asked for (exit 2)', async () => {
    const edited = payloadFile('edited.json', { ...original, amount: 5 });
    const base = ['dlq', 'edit', '--source', dlq, '--id', id, '--payload', edited];
    const locked = await cli([...base, '--events', events, '--header', 'msg.id=other']);
    expect(locked.code).toBe(2);
    expect(locked.err).toContain('LOCKED_HEADER');
    const invalid = payloadFile('invalid.json', { ...original, amount: -1 });
    const schema = await cli([
      'dlq',
      'edit',
      '--source',
      dlq,
      '--id',
      id,
      '--payload',
      invalid,
      '--events',
      events,
    ]);
    expect(schema.code).toBe(2);
    expect(schema.err).toContain('/amount: too_small');
    expect(schema.err).not.toContain('"amount":-1'); // issue paths and codes, never the values
    const noSchema = await cli(base);
    expect(noSchema.code).toBe(2);
    expect(noSchema.err).toContain('NO_SCHEMA');
    const unchecked = await cli([...base, '--without-schema']);
    expect(unchecked.code).toBe(0);
    expect(unchecked.out).toContain('NOT checked against a schema');
  });

  it('plans the edit with its diff; a changed plan file is refused; approved by another, it runs', async () => {
    const edited = payloadFile('edited.json', { ...original, amount: 5 });
    const plan = await cli([
      'dlq',
      'edit',
      '--source',
      dlq,
      '--id',
      id,
      '--payload',
      edited,
      '--events',
      events,
      '--out',
      'edit.json',
    ]);
    expect(plan.code).toBe(0);
    expect(plan.out).toContain('The edited payload passed the schema');
    expect(plan.out).toMatch(/replace +\/amount: 1 -> 5/);

    const written = JSON.parse(readFileSync(path.join(folder, 'edit.json'), 'utf8')) as {
      edit: { payload: string };
    };
    const tampered = {
      ...written,
      edit: { ...written.edit, payload: JSON.stringify({ ...original, amount: 5000 }) },
    };
    writeFileSync(path.join(folder, 'tampered.json'), JSON.stringify(tampered));
    const key = path.join(fixture.folder, 'jane.key.json');
    const refused = await cli(['dlq', 'approve', '--plan', 'tampered.json', '--key', key]);
    expect(refused.code).toBe(2);
    expect(await depthOf(connection, dlq)).toBe(1);

    const approve = await cli(['dlq', 'approve', '--plan', 'edit.json', '--key', key]);
    expect(approve.code).toBe(0);
    expect(approve.out).toMatch(/replace +\/amount: 1 -> 5/); // the approver reads the diff they sign
    // The genuine approval does not carry the changed file through execution either.
    const planted = await cli([
      'dlq',
      'redrive',
      '--plan',
      'tampered.json',
      '--approval',
      'edit.approval.json',
    ]);
    expect(planted.code).toBe(2);
    const run = await cli(['dlq', 'redrive', '--plan', 'edit.json', '--approval', 'edit.approval.json']);
    expect(run.code).toBe(0);
    expect(run.out).toContain('The edited copy was published');
    expect(await depthOf(connection, dlq)).toBe(0);
    expect(await depthOf(connection, workQueue)).toBe(1);
    expect(await depthOf(connection, `${dlq}.archive`)).toBe(1);
  });
});
