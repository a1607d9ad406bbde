import { createHmac, generateKeyPairSync } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as amqp from 'amqplib';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { uniqueName } from '../../harness/names';
import { declareGroupQueues, depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

/**
 * Issue 15, point 1: an approval means something. It is signed by the approver's own Ed25519 key (the
 * executor trusts the keyring's public keys), so holding the admin password neither lets anyone approve
 * under a name nor lets anyone guess the password from an approval file; planner, approver and executor
 * are three people.
 */
describe('Redrive approvals signed by approvers’ own keys', () => {
  let vhost: RabbitVhost;
  let connection: amqp.ChannelModel;
  let fixture: RedriveFixture;

  /** Runs the CLI in the fixture's folder as `user` (default: the admin). */
  async function cli(args: string[], env: Record<string, string> = {}) {
    let out = '';
    let err = '';
    const io: CliIo = {
      env: { ...fixture.cliEnv, MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.admin), ...env },
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: fixture.folder,
    };
    return { code: await runMessagingCli(args, io), out, err };
  }

  async function parkedDlq(count: number): Promise<string> {
    const destination = uniqueName('approvals');
    await declareGroupQueues(connection, `${destination}.billing`);
    await sendToQueues(
      connection,
      Array.from({ length: count }, (_, i) => parkedOrder(destination, 'billing', i)),
    );
    return `${destination}.billing.dlq`;
  }

  async function plan(dlq: string, out: string) {
    const planned = await cli(['dlq', 'plan', '--source', dlq, '--out', out]);
    expect(planned.code).toBe(0);
  }

  beforeAll(async () => {
    fixture = await RedriveFixture.create('approvals');
    vhost = await RabbitVhost.create('approvals');
    fixture.admit(vhost.admin.name);
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
  });

  afterAll(async () => {
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
    await fixture?.close();
  });

  it('makes an approver key pair; refuses a name with control characters', async () => {
    const made = await cli(['approver', 'keygen', '--name', 'carol.q']);
    expect(made.code).toBe(0);
    const privateFile = path.join(fixture.folder, 'carol.q.approver-key.json');
    expect(statSync(privateFile).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(privateFile, 'utf8'))).toMatchObject({ approver: 'carol.q' });
    const publicEntry = JSON.parse(
      readFileSync(path.join(fixture.folder, 'carol.q.approver-public.json'), 'utf8'),
    ) as { approver: string; publicKey: string };
    expect(publicEntry.publicKey).toContain('BEGIN PUBLIC KEY');
    expect((await cli(['approver', 'keygen', '--name', 'carol.q'])).code).toBe(1); // never overwrites
    expect((await cli(['approver', 'keygen', '--name', 'eve\u001b[2K'])).code).toBe(1);
  });

  it('an approval file holds nothing the admin password can be guessed from', async () => {
    const dlq = await parkedDlq(1);
    await plan(dlq, 'guess.json');
    const key = path.join(fixture.folder, 'jane.key.json');
    expect(
      (await cli(['dlq', 'approve', '--plan', 'guess.json', '--key', key], { MESSAGING_ADMIN_PASSWORD: '' }))
        .code,
    ).toBe(0);
    const approval = JSON.parse(
      readFileSync(path.join(fixture.folder, 'guess.approval.json'), 'utf8'),
    ) as Record<string, string>;
    const fields = Object.entries(approval)
      .filter(([name]) => name !== 'signature')
      .map(([, value]) => String(value))
      .join('\n');
    for (const guess of [vhost.admin.password, 'guest', 'hunter2']) {
      expect(createHmac('sha256', guess).update(fields).digest('hex')).not.toBe(approval.signature);
    }
    expect(JSON.stringify(approval)).not.toContain(vhost.admin.password);
  });

  // claim: C-62
  it('the admin password alone approves nothing: no --approver, no key of one’s own under a keyring name', async () => {
    const dlq = await parkedDlq(2);
    await plan(dlq, 'self.json');
    // The old way: name anybody as approver.
    const named = await cli(['dlq', 'approve', '--plan', 'self.json', '--approver', 'jane']);
    expect(named.code).toBe(1);
    expect(named.err).toMatch(/--key/);
    // A key pair made by the insider, calling itself jane.
    const { privateKey } = generateKeyPairSync('ed25519');
    const forged = {
      version: 1,
      approver: 'jane',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    };
    writeFileSync(path.join(fixture.folder, 'forged.key.json'), JSON.stringify(forged), { mode: 0o600 });
    expect((await cli(['dlq', 'approve', '--plan', 'self.json', '--key', 'forged.key.json'])).code).toBe(0);
    const run = await cli(['dlq', 'redrive', '--plan', 'self.json', '--approval', 'self.approval.json']);
    expect(run).toMatchObject({ code: 2 });
    expect(run.err).toContain('not signed with the key the keyring holds for its approver');
    // An approver the keyring does not know.
    const stranger = await cli(['approver', 'keygen', '--name', 'mallory']);
    expect(stranger.code).toBe(0);
    const approveArgs = ['dlq', 'approve', '--plan', 'self.json', '--key', 'mallory.approver-key.json'];
    // The approver's own command already knows the identity map has no mallory...
    const refused = await cli([...approveArgs, '--out', 'm.json']);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("the approver 'mallory' is in no entry of the identity map");
    // ...and an approval signed without the map (MESSAGING_ADMIN_APPROVERS unset) does not run either.
    expect((await cli([...approveArgs, '--out', 'm.json'], { MESSAGING_ADMIN_APPROVERS: '' })).code).toBe(0);
    const unknown = await cli(['dlq', 'redrive', '--plan', 'self.json', '--approval', 'm.json']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('not in the approver keyring');
    expect(await depthOf(connection, dlq)).toBe(2);
  });

  it('enforces four eyes: the planner cannot approve, the approver cannot execute', async () => {
    const dlq = await parkedDlq(1);
    await plan(dlq, 'four.json');
    const jane = path.join(fixture.folder, 'jane.key.json');
    expect((await cli(['dlq', 'approve', '--plan', 'four.json', '--key', jane])).code).toBe(0);
    // jane approved: jane may not execute it (as principal "jane").
    const asJane = await cli(['dlq', 'redrive', '--plan', 'four.json', '--approval', 'four.approval.json'], {
      MESSAGING_ADMIN_PRINCIPAL: 'jane',
      MESSAGING_ADMIN_PASSWORD: vhost.admin.password,
    });
    expect(asJane.code).toBe(2);
    expect(asJane.err).toContain('four eyes');
    expect(await depthOf(connection, dlq)).toBe(1);
    // The planner (the admin) signs nothing: approving a plan one made is refused at signing.
    const planner = await cli(['approver', 'keygen', '--name', vhost.admin.name]);
    expect(planner.code).toBe(0);
    const own = await cli([
      'dlq',
      'approve',
      '--plan',
      'four.json',
      '--key',
      `${vhost.admin.name}.approver-key.json`,
      '--out',
      'own.json',
    ]);
    expect(own.code).toBe(2);
    expect(own.err).toContain('four eyes');
    // Another admin than the approver runs it.
    const run = await cli(['dlq', 'redrive', '--plan', 'four.json', '--approval', 'four.approval.json']);
    expect(run.code).toBe(0);
    expect(await depthOf(connection, dlq)).toBe(0);
  });
});
