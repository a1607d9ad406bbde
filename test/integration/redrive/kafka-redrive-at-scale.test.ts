import { PostgresBulkPlanStore, RedriveService } from 'nest-reliable-messaging/redrive';
import { uniqueName } from '../../harness/names';
import { infraEnv } from '../../harness/infra';
import { TopicReader } from '../support/topic-reader';
import { BROKEN_CODE } from './support/incident-letters';
import { useKafkaRedriveSuite } from './support/kafka-redrive-suite';
import { RedriveFixture } from './support/redrive-fixture';
import { scaleLetters } from './support/scale-letters';

const GROUP = 2_000;

/**
 * Issue 40, item 2 on Kafka: a group spread over two partitions of a DLQ is planned once (the records
 * between its messages re-parked at the end, as a selection's are), executed a chunk at a time, crashes
 * after a chunk was committed but before the plan store recorded it, and is resumed by another process:
 * each message redriven once, every other record still in the DLQ, the audit log naming every one moved.
 */
describe('Redrive at scale (Kafka)', () => {
  const suite = useKafkaRedriveSuite('scale_kafka');
  const { kafka, topics, raw, groups } = suite;
  let fixture: RedriveFixture;
  let store: PostgresBulkPlanStore;
  const service = (): RedriveService =>
    fixture.service(
      { kind: 'kafka', brokers: infraEnv().kafkaBrokers, allowPlaintextLocal: true },
      { principal: 'redrive-admin', secret: 'test-secret' },
      { bulkStore: store },
    );
  beforeAll(async () => {
    ({ fixture } = suite.ready());
    store = await PostgresBulkPlanStore.connect({
      url: fixture.schema.databaseUrl,
      schema: fixture.schema.name,
    });
  });
  afterAll(async () => {
    await store?.close().catch(() => undefined);
  });

  it('plans 2,000 on two partitions once, crashes after 7 chunks, resumes: each message redriven once', async () => {
    const destination = uniqueName('scale_k_orders');
    const dlq = await topics.create(`${destination}.billing.dlq`, 2);
    const target = await topics.create(destination, 1);
    groups.push(`${dlq}.redrive`);
    const { letters, groupIds } = scaleLetters(destination, GROUP, 10, 5);
    const half = Math.ceil(letters.length / 2);
    await raw.send(letters.slice(0, half), 0);
    await raw.send(letters.slice(half), 1);

    const redrive = service();
    const plan = await redrive.planBulk({ source: dlq, selection: { by: 'filter', code: BROKEN_CODE } });
    const others = letters.length - GROUP;
    expect(plan.bulk).toMatchObject({ taken: GROUP, skipped: 1, byCode: { [BROKEN_CODE]: GROUP } });
    // What lies between the group's messages is re-parked; what lies after the last one stays where it is.
    expect(plan.bulk!.kept).toBeLessThanOrEqual(others);
    expect(plan.bulk!.kept).toBeGreaterThan(others - 20);
    const approval = fixture.approval(plan, 'jane');

    const progress: number[] = [];
    const crash = new Error('crash after chunk 7: committed on the broker, not yet recorded');
    await expect(
      redrive.executeBulk(await redrive.approve(plan, approval), {
        onProgress: (p) => progress.push(p.done),
        afterMove: (chunk) => {
          if (chunk === 7) throw crash;
        },
      }),
    ).rejects.toBe(crash);
    expect(progress).toEqual([100, 200, 300, 400, 500, 600]);

    const again = service();
    const result = await again.executeBulk(await again.approve(plan, approval));
    expect(result).toMatchObject({ redriven: GROUP, leftInSource: 0, movedNow: GROUP - 700, resumed: true });

    // Each message of the group once on the target (partition by partition, in order), none lost.
    const reader = await new TopicReader(target, kafka).start();
    await reader.waitFor(GROUP);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // a duplicate would arrive by now
    const all = [...reader.records];
    await reader.stop();
    const copied = all.map((r) => r.headers['msg.id']);
    expect(copied).toHaveLength(GROUP);
    expect(copied).toEqual(groupIds);
    // Every other record is still a dead letter: re-parked or never passed.
    const left = (await redrive.browse(dlq)).letters.map((l) => l.message.messageId);
    const notInGroup = letters.map((l) => l.headers['msg.id']).filter((id) => !groupIds.includes(id));
    expect([...left].sort()).toEqual([...notInGroup].sort());

    const executes = (await fixture.history(dlq)).filter(
      (e) => e.planHash === plan.hash && e.action === 'EXECUTE',
    );
    const audited = executes.filter((e) => e.outcome === 'PROGRESS').flatMap((e) => e.messageIds ?? []);
    expect(new Set(audited)).toEqual(new Set(groupIds));
    expect(executes[executes.length - 1]).toMatchObject({ outcome: 'REDRIVEN', redriveId: result.redriveId });
  }, 240_000); // a generous bound for a loaded CI machine, not a timing assertion
});
