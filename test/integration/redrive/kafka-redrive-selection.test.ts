import { RedriveService } from 'nest-reliable-messaging/redrive';
import { uniqueName } from '../../harness/names';
import { TopicReader } from '../support/topic-reader';
import { BROKEN_CODE, incidentLetters } from './support/incident-letters';
import { useKafkaRedriveSuite } from './support/kafka-redrive-suite';
import { RedriveFixture } from './support/redrive-fixture';

/**
 * Issue 29, items 2–4 on Kafka: a plan for a group (a failure code), for picked ids, skipping what cannot be
 * redriven; a topic is passed in order, so the records before a selected one that it does not take are
 * re-parked at the end of the DLQ (copy confirmed first) and stay; a discard archives into `<dlq>.archive`.
 */
describe('Redrive of a selection (Kafka)', () => {
  const suite = useKafkaRedriveSuite('select_kafka');
  const { kafka, topics, raw, groups } = suite;
  let fixture: RedriveFixture;
  let redrive: RedriveService;
  beforeAll(() => ({ fixture, redrive } = suite.ready()));

  const waiting = async (dlq: string) => (await redrive.browse(dlq)).letters.map((l) => l.message.messageId);

  // claim: C-73
  it('redrives a group, re-parks what lay between, skips and then discards the unredrivable one', async () => {
    const destination = uniqueName('select_k_orders');
    const dlq = await topics.create(`${destination}.billing.dlq`, 1);
    const target = await topics.create(destination, 1);
    topics.track(`${dlq}.archive`);
    groups.push(`${dlq}.redrive`, `${dlq}.archive.redrive`);
    const { letters, ids, foreignId } = incidentLetters(destination, 'billing', 8, 2);
    await raw.send(letters, 0);
    const broken = letters.filter((l) => l.headers['msg.failure-code'] === BROKEN_CODE);
    const redrivable = broken.map((l) => l.headers['msg.id']).filter((id) => id !== foreignId);
    expect(await waiting(dlq)).toEqual(ids);

    const plan = await redrive.plan({ source: dlq, selection: { by: 'filter', code: BROKEN_CODE } });
    expect(plan.messages.map((m) => m.messageId)).toEqual(redrivable);
    expect(plan.skipped?.map((s) => s.message.messageId)).toEqual([foreignId]);
    const lastTaken = ids.indexOf(redrivable[redrivable.length - 1]);
    const between = ids.slice(0, lastTaken).filter((id) => !redrivable.includes(id));
    expect(plan.kept?.map((m) => m.messageId)).toEqual(between);

    const result = await redrive.execute(await fixture.approve(redrive, plan));
    expect(result).toMatchObject({ redriven: redrivable.length, leftInSource: 0 });
    const reader = await new TopicReader(target, kafka).start();
    const copies = await reader.waitFor(redrivable.length);
    await reader.stop();
    expect(copies.map((r) => r.headers['msg.id'])).toEqual(redrivable);
    // Nothing lost: after the last one taken, then the re-parked ones, in their order.
    expect(await waiting(dlq)).toEqual([...ids.slice(lastTaken + 1), ...between]);

    // The unredrivable one, discarded: planned, approved by a second person, executed, archived.
    const discard = await redrive.plan({
      source: dlq,
      selection: { by: 'ids', messageIds: [foreignId] },
      action: 'discard',
    });
    expect(discard.messages.map((m) => m.messageId)).toEqual([foreignId]);
    const discarded = await redrive.execute(await fixture.approve(redrive, discard, 'bob'));
    expect(discarded).toMatchObject({ redriven: 1, target: `${dlq}.archive` });
    const archive = await redrive.inspectArchive(dlq);
    expect(archive.letters.map((l) => l.message.messageId)).toEqual([foreignId]);
    expect(await waiting(dlq)).not.toContain(foreignId);
    expect((await waiting(dlq)).sort()).toEqual(
      ids.filter((id) => !broken.some((b) => b.headers['msg.id'] === id)).sort(),
    );
  });

  it('finds a message by its real key and by id', async () => {
    const destination = uniqueName('select_k_find');
    const dlq = await topics.create(`${destination}.billing.dlq`, 3);
    const { letters, ids } = incidentLetters(destination, 'billing', 30, 0);
    await raw.send(letters);
    const byKey = await redrive.search(dlq, { key: 'customer-12' });
    expect(byKey.map((l) => l.message.messageId)).toEqual([ids[13]]);
    expect((await redrive.search(dlq, { messageId: ids[20] })).map((l) => l.message.messageId)).toEqual([
      ids[20],
    ]);
  });
});
