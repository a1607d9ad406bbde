import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as amqp from 'amqplib';
import { CliIo, runMessagingCli } from 'nest-reliable-messaging/testing';
import { drainQueue } from '../support/rabbit-wire';
import { BROKEN_CODE, incidentLetters } from './support/incident-letters';
import { depthOf, sendToQueues } from './support/parked-messages';
import { newGroupQueues, useRabbitRedriveSuite } from './support/rabbit-redrive-suite';

const idsOf = (messages: amqp.GetMessage[]) => messages.map((m) => String(m.properties.headers?.['msg.id']));

/**
 * Issue 29, items 2–4 on RabbitMQ: a plan takes a group (a failure code), picked ids or a filter, not only the
 * head; a message that cannot be redriven is skipped and never blocks the rest; it is discarded into
 * `<dlq>.archive` with the same plan → approval → execution; every other message stays, in order.
 */
describe('Redrive of a selection (RabbitMQ)', () => {
  const suite = useRabbitRedriveSuite('select_rmq');

  it('redrives a group, skips and then discards the unredrivable one, leaves the rest in order', async () => {
    const { redrive, fixture, connection } = suite;
    const { destination, workQueue, dlq } = await newGroupQueues(connection, 'orders');
    const { letters, ids, foreignId } = incidentLetters(destination, 'billing', 8, 2);
    await sendToQueues(connection, letters);
    const broken = letters.filter((l) => l.headers['msg.failure-code'] === BROKEN_CODE);
    const redrivable = broken.map((l) => l.headers['msg.id']).filter((id) => id !== foreignId);

    // Grouped by cause: two groups, the broken one counting the foreign message too.
    const { letters: all, depth } = await redrive.browse(dlq);
    expect(depth).toBe(9);
    expect(all.map((l) => l.message.messageId)).toEqual(ids);

    const plan = await redrive.plan({ source: dlq, selection: { by: 'filter', code: BROKEN_CODE } });
    expect(plan.messages.map((m) => m.messageId)).toEqual(redrivable);
    expect(plan.selection).toEqual({ by: 'filter', code: BROKEN_CODE });
    expect(plan.skipped?.map((s) => s.message.messageId)).toEqual([foreignId]);
    expect(plan.skipped?.[0].reason).toContain('msg.origin-destination');
    const result = await redrive.execute(await fixture.approve(redrive, plan));
    expect(result).toMatchObject({ redriven: redrivable.length, leftInSource: 0 });
    expect(idsOf(await drainQueue(connection, workQueue))).toEqual(redrivable);
    // Nothing else moved, and what stayed is in its order.
    const left = ids.filter((id) => !redrivable.includes(id));
    expect((await redrive.browse(dlq)).letters.map((l) => l.message.messageId)).toEqual(left);

    // One picked by hand, beside an id the DLQ does not hold (any more): the plan names it.
    const picked = left[left.length - 1];
    const gone = redrivable[0];
    const byId = await redrive.plan({ source: dlq, selection: { by: 'ids', messageIds: [gone, picked] } });
    expect(byId.messages.map((m) => m.messageId)).toEqual([picked]);
    expect(byId.notFound).toEqual([gone]);
    await redrive.execute(await fixture.approve(redrive, byId, 'bob'));
    expect(idsOf(await drainQueue(connection, workQueue))).toEqual([picked]);

    // The unredrivable one is discarded: planned, approved by another person, executed, archived.
    const discard = await redrive.plan({
      source: dlq,
      selection: { by: 'ids', messageIds: [foreignId] },
      action: 'discard',
    });
    expect(discard).toMatchObject({ action: 'discard', target: `${dlq}.archive` });
    expect(discard.skipped).toBeUndefined();
    expect(discard.messages.map((m) => m.messageId)).toEqual([foreignId]);
    const discarded = await redrive.execute(await fixture.approve(redrive, discard));
    expect(discarded).toMatchObject({ redriven: 1, leftInSource: 0, target: `${dlq}.archive` });
    const archive = await redrive.inspectArchive(dlq);
    expect(archive.letters.map((l) => l.message.messageId)).toEqual([foreignId]);
    expect(archive.letters[0].headers['msg.archive-id']).toBe(discarded.redriveId);
    expect(idsOf(await drainQueue(connection, workQueue))).toEqual([]);
    const remaining = left.filter((id) => id !== picked && id !== foreignId);
    expect((await redrive.browse(dlq)).letters.map((l) => l.message.messageId)).toEqual(remaining);

    // The audit log tells a discard from a redrive, and says how messages were chosen.
    const history = await fixture.history(dlq);
    expect(
      history.filter((e) => e.planHash === discard.hash && e.action === 'EXECUTE').map((e) => e.outcome),
    ).toEqual(['STARTED', 'ARCHIVED']);
    expect(history.find((e) => e.planHash === plan.hash && e.action === 'PLAN')?.detail).toContain(
      `selected by code ${BROKEN_CODE}; 1 skipped`,
    );
    expect(history.find((e) => e.planHash === byId.hash && e.action === 'PLAN')?.detail).toContain(
      `1 id(s) not found: ${gone}`,
    );
  });

  it('finds a message by id and by its real key (through the pseudonym), paged past the first 100', async () => {
    const { redrive, connection } = suite;
    const { destination, dlq } = await newGroupQueues(connection, 'orders');
    const { letters, ids } = incidentLetters(destination, 'billing', 150, 0);
    await sendToQueues(connection, letters);
    const { letters: all, depth } = await redrive.browse(dlq);
    expect(depth).toBe(151);
    expect(all).toHaveLength(151);
    const byKey = await redrive.search(dlq, { key: 'customer-120' });
    expect(byKey.map((l) => l.message.messageId)).toEqual([ids[121]]);
    expect(byKey[0].headers['msg.key']).not.toBe('customer-120'); // shown as its pseudonym only
    expect((await redrive.search(dlq, { messageId: ids[140] })).map((l) => l.message.position)).toEqual([
      { kind: 'queue', index: 140 },
    ]);
    expect(await redrive.search(dlq, { key: 'nobody' })).toEqual([]);
  });

  it('plans a group and a discard from the CLI (dlq plan --category --code, --ids --discard)', async () => {
    const { fixture, vhost, connection } = suite;
    const folder = mkdtempSync(path.join(os.tmpdir(), 'select-cli-'));
    const cli = async (args: string[]) => {
      let out = '';
      let err = '';
      const io: CliIo = {
        env: { ...fixture.cliEnv, MESSAGING_ADMIN_AMQP_URL: vhost.urlAs(vhost.admin) },
        out: (text) => void (out += text),
        err: (text) => void (err += text),
        cwd: folder,
        now: () => new Date(),
      };
      return { code: await runMessagingCli(args, io), out, err };
    };
    const key = path.join(fixture.folder, 'jane.key.json');
    try {
      const { destination, dlq } = await newGroupQueues(connection, 'orders');
      const { letters, foreignId } = incidentLetters(destination, 'billing', 4, 1);
      await sendToQueues(connection, letters);

      const group = ['dlq', 'plan', '--source', dlq, '--category', 'TRANSIENT', '--code', BROKEN_CODE];
      const plan = await cli([...group, '--out', 'group.json']);
      expect(plan.code).toBe(0);
      expect(plan.out).toContain(`Selected by category TRANSIENT, code ${BROKEN_CODE}.`);
      expect(plan.out).toContain(`Skipped ${foreignId} at #1:`);
      expect(plan.out).toContain('2 of 5 waiting message(s) would be redriven.');
      expect((await cli(['dlq', 'approve', '--plan', 'group.json', '--key', key])).code).toBe(0);
      const run = await cli(['dlq', 'redrive', '--plan', 'group.json', '--approval', 'group.approval.json']);
      expect(run.out).toContain('2 message(s) redriven; 0 left');

      const discard = await cli([
        'dlq',
        'plan',
        '--source',
        dlq,
        '--ids',
        foreignId,
        '--discard',
        '--out',
        'd.json',
      ]);
      expect(discard.out).toContain('1 of 3 waiting message(s) would be discarded into the archive.');
      const approved = await cli(['dlq', 'approve', '--plan', 'd.json', '--key', key]);
      expect(approved.out).toContain('1 message(s) to discard (archive).');
      const archived = await cli(['dlq', 'redrive', '--plan', 'd.json', '--approval', 'd.approval.json']);
      expect(archived.out).toContain(`1 message(s) archived in ${dlq}.archive; 0 left in ${dlq}.`);
      expect(await depthOf(connection, dlq)).toBe(2);
      expect(await depthOf(connection, `${dlq}.archive`)).toBe(1);
      expect((await cli(['dlq', 'plan', '--source', dlq, '--ids', 'a', '--code', 'x'])).code).toBe(1);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
