import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as amqp from 'amqplib';
import { readApproverSigner } from 'nest-reliable-messaging/redrive';
import { CliIo, runMessagingCli, signApproval } from 'nest-reliable-messaging/testing';
import { infraEnv } from '../../harness/infra';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { RawKafkaProducer } from '../support/kafka-wire';
import { withHeaders } from '../support/raw-messages';
import { declareGroupQueues, depthOf, parkedOrder, sendToQueues } from './support/parked-messages';
import { RabbitVhost } from './support/rabbit-vhost';
import { RedriveFixture } from './support/redrive-fixture';

type Json = Record<string, unknown>;

/** The plan hash as anyone can compute it: SHA-256 of the canonical JSON (no key is needed). */
function rehash(plan: Json): Json {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .filter((k) => (value as Json)[k] !== undefined)
              .map((k) => [k, sorted((value as Json)[k])]),
          )
        : value;
  const { hash: _old, ...content } = plan;
  const digest = createHash('sha256')
    .update(JSON.stringify(sorted(content)))
    .digest('hex');
  return { ...content, hash: `sha256:${digest}` };
}

/** The terminal must never get these raw: escape, bell, bidi overrides, zero-width characters. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const RAW_CONTROLS = /[\u001b\u0007\u202a-\u202e\u2066-\u2069\u200b-\u200f]/;

/**
 * Issue 28, items 1, 2 and 6: what an approver signs is what runs (an edited plan file, its hash
 * recomputed, is refused, naming what differed; the planner comes from the audit log, not the file); four
 * eyes counts people, by a reviewed identity map, not names; text planted in the DLQ reaches the terminal
 * escaped, on the refusal path too. And item 8: a DLQ name with dots takes its route from the topology.
 */
describe('What the redrive trusts (issue 28)', () => {
  let vhost: RabbitVhost;
  let connection: amqp.ChannelModel;
  let fixture: RedriveFixture;
  let folder: string;

  /** Runs the CLI in the suite's folder as the vhost's admin, with `env` on top. */
  async function cli(args: string[], env: Record<string, string> = {}) {
    let out = '';
    let err = '';
    const io: CliIo = {
      env: { ...fixture.cliEnv, MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.admin), ...env },
      out: (text) => void (out += text),
      err: (text) => void (err += text),
      cwd: folder,
    };
    return { code: await runMessagingCli(args, io), out, err };
  }

  /** A group's queues with one parked message; `origin` plants another `msg.origin-destination`. */
  async function parked(prefix: string, origin?: string) {
    const destination = uniqueName(prefix);
    const workQueue = `${destination}.billing`;
    await declareGroupQueues(connection, workQueue);
    const message = parkedOrder(destination, 'billing', 1);
    await sendToQueues(connection, [
      origin === undefined ? message : withHeaders(message, { 'msg.origin-destination': origin }),
    ]);
    return { destination, workQueue, dlq: `${workQueue}.dlq` };
  }

  const readJson = (file: string) => JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as Json;
  const writeJson = (file: string, value: unknown) =>
    writeFileSync(path.join(folder, file), JSON.stringify(value, null, 2));
  const approvalFile = (file: string, plan: Json, approver: 'jane' | 'bob' = 'jane') =>
    writeJson(
      file,
      signApproval(plan as never, readApproverSigner(fixture.keys[approver].privateKeyFile), {}, new Date()),
    );

  beforeAll(async () => {
    fixture = await RedriveFixture.create('trust');
    vhost = await RabbitVhost.create('trust');
    fixture.admit(vhost.admin.name);
    connection = await amqp.connect(vhost.urlAs(vhost.admin));
    folder = mkdtempSync(path.join(os.tmpdir(), 'redrive-trust-'));
  });

  afterAll(async () => {
    await connection?.close().catch(() => undefined);
    await vhost?.delete();
    await fixture?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  describe('item 1: an edited plan file', () => {
    // claim: C-64
    it('refuses a target and group edited to another service’s work queue (hash recomputed), naming what differed', async () => {
      const { dlq, workQueue } = await parked('edited');
      const other = uniqueName('other');
      await declareGroupQueues(connection, `${other}.shipping`);
      const local = ['--local-plaintext'];
      expect((await cli(['dlq', 'plan', '--source', dlq, '--out', 'route.json', ...local])).code).toBe(0);
      const edited = rehash({ ...readJson('route.json'), target: `${other}.shipping`, group: 'shipping' });
      writeJson('route.json', edited);

      // The approver is shown the route, and now told it is not the one the source derives.
      const key = path.join(fixture.folder, 'jane.key.json');
      const approve = await cli(['dlq', 'approve', '--plan', 'route.json', '--key', key]);
      expect(approve.code).toBe(2);
      expect(approve.err).toContain(
        `target: the plan says '${other}.shipping', ${dlq} derives '${workQueue}'`,
      );
      expect(approve.err).toContain("group: the plan says 'shipping', the source derives 'billing'");

      // An approval signed anyway (by a script) does not make it run.
      approvalFile('route.approval.json', edited);
      const run = await cli([
        'dlq',
        'redrive',
        '--plan',
        'route.json',
        '--approval',
        'route.approval.json',
        ...local,
      ]);
      expect(run.code).toBe(2);
      expect(run.err).toContain(`target: the plan says '${other}.shipping'`);
      expect(await depthOf(connection, `${other}.shipping`)).toBe(0);
      expect(await depthOf(connection, dlq)).toBe(1);
    });

    it('takes the planner from the audit log: a plannedBy edited in the file is refused', async () => {
      const { dlq } = await parked('planner');
      expect(
        (await cli(['dlq', 'plan', '--source', dlq, '--out', 'who.json', '--local-plaintext'])).code,
      ).toBe(0);
      // The planner would like to approve their own plan: they rename the planner in the file.
      const edited = rehash({ ...readJson('who.json'), plannedBy: 'somebody-else' });
      writeJson('who.json', edited);
      approvalFile('who.approval.json', edited);
      const run = await cli([
        'dlq',
        'redrive',
        '--plan',
        'who.json',
        '--approval',
        'who.approval.json',
        '--local-plaintext',
      ]);
      expect(run.code).toBe(2);
      expect(run.err).toContain('the audit log has no plan with this hash');
      expect(await depthOf(connection, dlq)).toBe(1);
    });
  });

  describe('item 2: four eyes counts people', () => {
    /** The keyring with an identity map: jane uses the vhost's admin principal too; bob only his key. */
    function identityMap(janeAccounts: string[]) {
      writeJson('people.json', {
        version: 2,
        people: [
          { name: 'jane', accounts: janeAccounts, publicKey: fixture.keys.jane.publicKey.publicKey },
          { name: 'bob', accounts: [], publicKey: fixture.keys.bob.publicKey.publicKey },
        ],
      });
      return { MESSAGING_ADMIN_APPROVERS: path.join(folder, 'people.json') };
    }

    it('refuses an execution without a reviewed identity map, outside local development', async () => {
      const { dlq } = await parked('nomap');
      // A keyring of version 1: the approvers' keys, no identity map. jane's principal is the vhost's admin.
      writeJson('names-only.json', {
        version: 1,
        approvers: [fixture.keys.jane.publicKey, fixture.keys.bob.publicKey],
      });
      const namesOnly = { MESSAGING_ADMIN_APPROVERS: path.join(folder, 'names-only.json') };
      expect((await cli(['dlq', 'plan', '--source', dlq, '--out', 'nomap.json'], namesOnly)).code).toBe(0);
      approvalFile('nomap.approval.json', readJson('nomap.json'));
      const run = await cli(
        ['dlq', 'redrive', '--plan', 'nomap.json', '--approval', 'nomap.approval.json'],
        namesOnly,
      );
      expect(run.code).toBe(2);
      expect(run.err).toContain('identity map');
      expect(await depthOf(connection, dlq)).toBe(1);
    });

    // claim: C-63
    it('refuses one person with a broker principal and an approver key; runs with a second person', async () => {
      const { dlq, workQueue } = await parked('oneperson');
      const map = identityMap([vhost.admin.name]);
      expect((await cli(['dlq', 'plan', '--source', dlq, '--out', 'one.json'], map)).code).toBe(0);
      const key = path.join(fixture.folder, 'jane.key.json');
      const own = await cli(['dlq', 'approve', '--plan', 'one.json', '--key', key], map);
      expect(own.code).toBe(2);
      expect(own.err).toContain(`'${vhost.admin.name}' and 'jane' are one person (jane)`);
      approvalFile('one.approval.json', readJson('one.json'));
      const run = await cli(['dlq', 'redrive', '--plan', 'one.json', '--approval', 'one.approval.json'], map);
      expect(run.code).toBe(2);
      expect(run.err).toContain('four eyes');
      expect(await depthOf(connection, dlq)).toBe(1);

      approvalFile('one.bob.json', readJson('one.json'), 'bob');
      const second = await cli(['dlq', 'redrive', '--plan', 'one.json', '--approval', 'one.bob.json'], map);
      expect(second.code).toBe(0);
      expect(await depthOf(connection, workQueue)).toBe(1);
    });

    it('refuses an executor the identity map does not know, naming the account', async () => {
      const { dlq } = await parked('unmapped');
      const map = identityMap([]);
      expect((await cli(['dlq', 'plan', '--source', dlq, '--out', 'unmapped.json'], map)).code).toBe(0);
      approvalFile('unmapped.approval.json', readJson('unmapped.json'), 'bob');
      const run = await cli(
        ['dlq', 'redrive', '--plan', 'unmapped.json', '--approval', 'unmapped.approval.json'],
        map,
      );
      expect(run.code).toBe(2);
      expect(run.err).toContain(`'${vhost.admin.name}' is in no entry of the identity map`);
      expect(await depthOf(connection, dlq)).toBe(1);
    });

    it('local development needs no principal, password or identity map: --local-plaintext on a local Kafka', async () => {
      const local = await cli(['dlq', 'list', '--local-plaintext'], {
        MESSAGING_ADMIN_AMQP_URL: '',
        MESSAGING_ADMIN_KAFKA_BROKERS: infraEnv().kafkaBrokers.join(','),
      });
      expect(local.err).toBe('');
      expect(local.code).toBe(0);
    });
  });

  describe('issue 37 item 3: the local redrive, as the commands print it', () => {
    /** The command a "Next, ...:" line of `out` prints, as arguments (without `nest-messaging`). */
    const nextOf = (out: string): string[] => {
      const line = out.split('\n').find((l) => l.startsWith('Next') || l.includes('. Next'));
      const command = line?.slice(line.indexOf('nest-messaging dlq ')).trim();
      expect(command).toBeDefined();
      return command!.split(' ').slice(1);
    };

    it('plan, approve and redrive run as printed: "Next:" carries --local-plaintext, history takes it', async () => {
      const { dlq, workQueue } = await parked('localnext');
      const plan = await cli(['dlq', 'plan', '--source', dlq, '--out', 'local.json', '--local-plaintext']);
      expect(plan.code).toBe(0);
      const approve = nextOf(plan.out);
      expect(approve).toEqual([
        'dlq',
        'approve',
        '--plan',
        'local.json',
        '--key',
        '<name>.approver-key.json',
        '--local-plaintext',
      ]);
      const key = path.join(fixture.folder, 'jane.key.json');
      const approved = await cli(approve.map((a) => (a === '<name>.approver-key.json' ? key : a)));
      expect(approved.code).toBe(0);
      const redrive = nextOf(approved.out);
      expect(redrive).toEqual([
        'dlq',
        'redrive',
        '--plan',
        'local.json',
        '--approval',
        'local.approval.json',
        '--local-plaintext',
      ]);
      const run = await cli(redrive);
      expect(RedriveFixture.withoutRewriteWarning(run.err)).toBe('');
      expect(run.code).toBe(0);
      expect(await depthOf(connection, workQueue)).toBe(1);
      const history = await cli(['dlq', 'history', '--source', dlq, '--local-plaintext']);
      expect(history.code).toBe(0);
      expect(history.out).toContain('EXECUTE');
    });

    it('refuses an approver missing from the keyring naming the fix, audited UNKNOWN_APPROVER', async () => {
      const { dlq } = await parked('nokey');
      writeJson('jane-only.json', {
        version: 2,
        people: [
          { name: 'jane', publicKey: fixture.keys.jane.publicKey.publicKey },
          { name: 'ops', accounts: [vhost.admin.name] },
        ],
      });
      const janeOnly = { MESSAGING_ADMIN_APPROVERS: path.join(folder, 'jane-only.json') };
      expect((await cli(['dlq', 'plan', '--source', dlq, '--out', 'nokey.json'], janeOnly)).code).toBe(0);
      approvalFile('nokey.approval.json', readJson('nokey.json'), 'bob');
      const run = await cli(
        ['dlq', 'redrive', '--plan', 'nokey.json', '--approval', 'nokey.approval.json'],
        janeOnly,
      );
      expect(run.code).toBe(2);
      expect(run.err).toContain("the approver 'bob' is not in the approver keyring");
      expect(run.err).toContain('the keyring file whose path MESSAGING_ADMIN_APPROVERS gives');
      expect(run.err).not.toContain('Approve the plan you mean to run');
      const history = await cli(['dlq', 'history', '--source', dlq]);
      expect(history.out).toContain('UNKNOWN_APPROVER');
      expect(history.out).not.toContain('APPROVAL_MISMATCH');
      expect(await depthOf(connection, dlq)).toBe(1);
    });
  });

  describe('item 6: text planted in the DLQ', () => {
    // claim: C-72
    it('reaches the terminal escaped on the refusal path', async () => {
      const planted = 'x\u001b]0;pwned\u0007\u001b[2J\u202eevil\u200b';
      const { dlq } = await parked('planted', planted);
      const refused = await cli(['dlq', 'plan', '--source', dlq, '--local-plaintext']);
      expect(refused.code).toBe(2);
      expect(RedriveFixture.withoutRewriteWarning(refused.err)).toMatch(/^Refused: /);
      expect(refused.err).not.toMatch(RAW_CONTROLS);
      expect(refused.err).toContain('x\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{202e}evil\\u{200b}');
      const history = await cli(['dlq', 'history', '--source', dlq, '--verbose']);
      expect(history.out).not.toMatch(RAW_CONTROLS);
    });
  });

  describe('item 8: a DLQ name with dots (Kafka)', () => {
    const kafka = testKafka();
    const topics = new KafkaTopics(kafka);
    const raw = new RawKafkaProducer(kafka);
    const kafkaEnv = () => ({
      MESSAGING_ADMIN_AMQP_URL: '',
      MESSAGING_ADMIN_KAFKA_BROKERS: infraEnv().kafkaBrokers.join(','),
      MESSAGING_ADMIN_PRINCIPAL: 'ops-local',
      MESSAGING_ADMIN_PASSWORD: 'unused',
    });

    afterAll(async () => {
      await raw.stop();
      await topics.cleanup();
    });

    it('takes the route from the topology; a planted origin cannot pick the other split', async () => {
      // `<shop>.orders.billing.dlq` is the DLQ of the group `billing` of `<shop>.orders`, or of the group
      // `orders.billing` of `<shop>`: the name alone does not say which.
      const shop = uniqueName('shop');
      await topics.create(shop, 1);
      await topics.create(`${shop}.orders`, 1);
      const dlq = await topics.create(`${shop}.orders.billing.dlq`, 1);
      await raw.send([
        withHeaders(parkedOrder(`${shop}.orders`, 'billing', 1), { 'msg.origin-destination': shop }),
      ]);
      const plan = ['dlq', 'plan', '--source', dlq, '--local-plaintext'];

      const guessed = await cli(plan, kafkaEnv());
      expect(guessed.code).toBe(2);
      expect(guessed.err).toContain(`${shop} + orders.billing`);
      expect(guessed.err).toContain(`${shop}.orders + billing`);
      expect(guessed.err).toContain('--topology');

      writeJson('topology.json', {
        destinations: [],
        groups: [{ group: 'billing', destination: `${shop}.orders` }],
      });
      const withTopology = await cli([...plan, '--topology', 'topology.json'], kafkaEnv());
      expect(withTopology.code).toBe(2);
      expect(withTopology.err).toContain(`msg.origin-destination`);
      const admin = kafka.admin();
      await admin.connect();
      try {
        expect((await admin.fetchTopicOffsets(shop))[0].high).toBe('0');
      } finally {
        await admin.disconnect();
      }
    });
  });
});
