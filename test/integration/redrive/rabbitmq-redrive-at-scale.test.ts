import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as amqp from 'amqplib';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import {
  PostgresBulkPlanStore,
  RedrivePlanAlteredError,
  RedrivePlanKindError,
  RedriveRefusedError,
  RedriveService,
} from 'nest-reliable-messaging/redrive';
import { BROKEN_CODE } from './support/incident-letters';
import { depthOf, sendToQueues } from './support/parked-messages';
import { newGroupQueues, useRabbitRedriveSuite } from './support/rabbit-redrive-suite';
import { scaleLetters } from './support/scale-letters';

/** The group's size: 10,000 runs in bench/redrive-at-scale.ts (basic.get is one round trip a message). */
const GROUP = 4_000;

/** The built CLI, as an operator runs it. */
const CLI = path.resolve(__dirname, '../../../libs/messaging/bin/nest-messaging.js');

/**
 * Runs the CLI as a process of its own and kills it (SIGKILL: no cleanup, no finally) once it printed a
 * progress line at or past `killAt`; resolves with what it printed.
 */
function killedMidway(args: string[], env: NodeJS.ProcessEnv, cwd: string, killAt: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const done = [...out.matchAll(/Progress: (\d+) of/g)].map((m) => Number(m[1]));
      if (done.some((n) => n >= killAt)) child.kill('SIGKILL');
    });
    child.stderr.on('data', (chunk: Buffer) => void (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve(out);
      else reject(new Error(`the CLI ended (${code}) before it was killed:\n${out}`));
    });
  });
}

/** Every message of `queue`, taken (acked) a batch at a time; their `msg.id`s in order. */
async function drainIds(connection: amqp.ChannelModel, queue: string): Promise<string[]> {
  const channel = await connection.createChannel();
  const ids: string[] = [];
  try {
    for (;;) {
      const message = await channel.get(queue, { noAck: true });
      if (message === false) break;
      ids.push(String(message.properties.headers?.['msg.id']));
    }
  } finally {
    await channel.close();
  }
  return ids;
}

/**
 * Issue 40, item 2 on RabbitMQ: a group of 4,000 dead letters (10,000: the bench) is planned and approved once (the plan
 * signs the digest of its items, kept in the plan store), executed a chunk at a time with progress, and a run
 * that crashes half-way is resumed from the plan store: nothing lost, nothing moved twice, the rest of the
 * DLQ left in order, and the audit log names every message moved.
 */
describe('Redrive at scale (RabbitMQ)', () => {
  const suite = useRabbitRedriveSuite('scale_rmq');
  let store: PostgresBulkPlanStore;
  const service = (): RedriveService =>
    suite.fixture.service(
      { kind: 'rabbitmq', url: suite.vhost.url },
      { principal: suite.vhost.admin.name, secret: suite.vhost.admin.password },
      { bulkStore: store },
    );
  beforeAll(async () => {
    const { schema } = suite.fixture;
    store = await PostgresBulkPlanStore.connect({ url: schema.databaseUrl, schema: schema.name });
  });
  afterAll(async () => {
    await store?.close().catch(() => undefined);
  });

  it('plans 4,000 once, crashes after 37 chunks, resumes from the plan store: each message moved once', async () => {
    const { fixture, connection } = suite;
    const { workQueue, dlq, destination } = await newGroupQueues(connection, 'scale');
    const { letters, groupIds, otherIds } = scaleLetters(destination, GROUP, 10, 5);
    await sendToQueues(connection, letters);
    const foreignId = letters[5].headers['msg.id'];

    const redrive = service();
    const plan = await redrive.planBulk({ source: dlq, selection: { by: 'filter', code: BROKEN_CODE } });
    expect(plan.messages).toEqual([]);
    expect(plan.bulk).toMatchObject({ taken: GROUP, kept: 0, skipped: 1, byCode: { [BROKEN_CODE]: GROUP } });
    expect(plan.skipped?.map((s) => s.message.messageId)).toEqual([foreignId]);
    expect(plan.depth).toBe(letters.length);
    // The plan signs the selection by digest: its size does not grow with the group.
    expect(JSON.stringify(plan).length).toBeLessThan(5_000);

    const approval = fixture.approval(plan, 'jane');
    // A plan at scale never runs through execute() (which would take none of its messages).
    await expect(redrive.execute(await redrive.approve(plan, fixture.approval(plan, 'bob')))).rejects.toThrow(
      RedrivePlanKindError,
    );

    const progress: number[] = [];
    const crash = new Error('crash after chunk 37: moved on the broker, not yet recorded');
    await expect(
      redrive.executeBulk(await redrive.approve(plan, approval), {
        onProgress: (p) => progress.push(p.done),
        afterMove: (chunk) => {
          if (chunk === 37) throw crash;
        },
      }),
    ).rejects.toBe(crash);
    expect(progress).toEqual(Array.from({ length: 36 }, (_, i) => (i + 1) * 100));
    expect(await store.counts(plan.bulk!.store)).toEqual({ done: 3_600, taken: GROUP, inFlight: 100 });
    expect(await depthOf(connection, workQueue)).toBe(3_700); // chunk 37 moved before the crash

    // Another process resumes with the same approval: what the crash left in flight is settled first.
    const again = service();
    const resumed: number[] = [];
    const result = await again.executeBulk(await again.approve(plan, approval), {
      onProgress: (p) => resumed.push(p.done),
    });
    expect(result).toMatchObject({
      redriven: GROUP,
      leftInSource: 0,
      movedNow: GROUP - 3_700,
      resumed: true,
    });
    expect(resumed[0]).toBe(3_800);
    expect(resumed[resumed.length - 1]).toBe(GROUP);

    // Nothing lost, nothing twice, in the group's order; the rest of the DLQ stays, in its order.
    const moved = await drainIds(connection, workQueue);
    expect(moved).toHaveLength(GROUP);
    expect(moved).toEqual(groupIds);
    const left = await drainIds(connection, dlq);
    expect(left).toEqual(letters.map((l) => l.headers['msg.id']).filter((id) => !groupIds.includes(id)));
    expect(left).toHaveLength(otherIds.length + 1);

    // One plan, one approval: its audit trail names the planner, the start, each chunk, the resume, the end.
    const history = (await fixture.history(dlq)).filter((e) => e.planHash === plan.hash);
    const executes = history.filter((e) => e.action === 'EXECUTE');
    expect(history.filter((e) => e.action === 'PLAN').map((e) => e.outcome)).toEqual(['PLANNED']);
    expect(executes[0].outcome).toBe('STARTED');
    expect(executes.map((e) => e.outcome)).toContain('RESUMED');
    expect(executes[executes.length - 1]).toMatchObject({ outcome: 'REDRIVEN', redriveId: result.redriveId });
    const audited = executes.filter((e) => e.outcome === 'PROGRESS').flatMap((e) => e.messageIds ?? []);
    expect(new Set(audited)).toEqual(new Set(groupIds));
    expect(executes.every((e) => e.redriveId === result.redriveId)).toBe(true);

    // Run to its end, the plan runs no more.
    const third = service();
    await expect(
      third.executeBulk(await third.approve(plan, fixture.approval(plan, 'bob'))),
    ).rejects.toBeInstanceOf(RedriveRefusedError);
  }, 240_000); // a generous bound for a loaded CI machine, not a timing assertion

  it('CLI: a redrive killed mid-chunk (SIGKILL) resumes with the same command; nothing lost', async () => {
    const { fixture, vhost, connection } = suite;
    const folder = mkdtempSync(path.join(os.tmpdir(), 'scale-cli-'));
    const env = { ...fixture.cliEnv, MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.admin) };
    const cli = async (args: string[]) => {
      let out = '';
      const io: CliIo = {
        env,
        out: (text) => void (out += text),
        err: (text) => void (out += text),
        cwd: folder,
        now: () => new Date(),
      };
      return { code: await runMessagingCli(args, io), out };
    };
    try {
      const group = 1_500;
      const { workQueue, dlq, destination } = await newGroupQueues(connection, 'scale_cli');
      const { letters, groupIds } = scaleLetters(destination, group, 10, 5);
      await sendToQueues(connection, letters);
      const plan = await cli([
        'dlq',
        'plan',
        '--source',
        dlq,
        '--code',
        BROKEN_CODE,
        '--all',
        '--out',
        'p.json',
      ]);
      expect(plan.code).toBe(0);
      expect(plan.out).toContain(`${group} of ${letters.length} waiting message(s) would be redriven.`);
      expect(plan.out).toContain('A plan at scale');
      expect(plan.out).toMatch(new RegExp(`${BROKEN_CODE.replace('/', '\\/')}\\s+${group}`));
      const key = path.join(fixture.folder, 'jane.key.json');
      const approved = await cli(['dlq', 'approve', '--plan', 'p.json', '--key', key]);
      expect(approved.code).toBe(0);
      expect(approved.out).toContain(`${group} message(s) to redrive.`);

      const redriveArgs = ['dlq', 'redrive', '--plan', 'p.json', '--approval', 'p.approval.json'];
      const killed = await killedMidway(redriveArgs, { ...process.env, ...env }, folder, 500);
      expect(killed).toContain('Progress: 100 of 1500');

      const resumed = await cli(redriveArgs);
      expect(resumed.code).toBe(0);
      expect(resumed.out).toContain('(resumed)');
      expect(resumed.out).toContain(`${group} message(s) redriven`);
      expect(resumed.out).toContain(`0 left in ${dlq}.`);

      // Nothing lost. A copy confirmed but not yet settled when the process died is sent again: at most
      // the one chunk in flight, each a message of the group under its own msg.id, which the inbox absorbs.
      const moved = await drainIds(connection, workQueue);
      expect(new Set(moved)).toEqual(new Set(groupIds));
      expect(moved.length - group).toBeLessThanOrEqual(100);
      expect(await depthOf(connection, dlq)).toBe(letters.length - group);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 240_000); // a generous bound for a loaded CI machine, not a timing assertion

  it('refuses a plan whose stored items were changed: the trigger, then the digest; nothing moves', async () => {
    const { fixture, connection } = suite;
    const { workQueue, dlq, destination } = await newGroupQueues(connection, 'scale_tamper');
    const { letters } = scaleLetters(destination, 50, 10, 5);
    await sendToQueues(connection, letters);
    const redrive = service();
    const plan = await redrive.planBulk({ source: dlq, selection: { by: 'filter', code: BROKEN_CODE } });
    const items = `"${fixture.schema.name}".messaging_redrive_bulk_item`;
    const tamper = `update ${items} set message = jsonb_set(message, '{failureCode}', '"BENIGN"') where seq = 3`;
    // Sealed: only the status changes, even for the table's owner.
    await expect(fixture.schema.query(tamper)).rejects.toThrow(/change in status only/);
    await expect(fixture.schema.query(`delete from ${items} where seq = 3`)).rejects.toThrow(/status only/);
    // Past the trigger (a superuser): the digest re-derived at execution no longer matches the signed one.
    await fixture.schema.query(`alter table ${items} disable trigger messaging_redrive_bulk_item_sealed`);
    await fixture.schema.query(tamper);
    await fixture.schema.query(`alter table ${items} enable trigger messaging_redrive_bulk_item_sealed`);
    const approved = await redrive.approve(plan, fixture.approval(plan, 'jane'));
    await expect(redrive.executeBulk(approved)).rejects.toThrow(RedrivePlanAlteredError);
    expect(await depthOf(connection, workQueue)).toBe(0);
    expect(await depthOf(connection, dlq)).toBe(letters.length);
    const refusals = (await fixture.history(dlq)).filter(
      (e) => e.planHash === plan.hash && e.action === 'REFUSE',
    );
    expect(refusals.map((e) => e.outcome)).toEqual(['PLAN_ALTERED']);
  });
});
