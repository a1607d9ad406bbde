import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { RedriveService } from 'nest-reliable-messaging/redrive';
import { WireMessage } from 'nest-reliable-messaging/testing';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { TopicReader } from '../support/topic-reader';
import { parkedOrder } from './support/parked-messages';
import { useKafkaRedriveSuite } from './support/kafka-redrive-suite';
import { Approver, RedriveFixture } from './support/redrive-fixture';

/**
 * The console's incident on Kafka without the browser: 200 dead letters of one key (one partition) redriven
 * in two rounds of 100, each copy once; the time of each step is printed, never asserted. And a DLQ whose
 * last record is a transaction's commit marker (a control record, never handed to a reader): it is read and
 * redriven, instead of waiting for an offset that cannot come.
 */
describe('Redrive on Kafka, 200 dead letters', () => {
  const suite = useKafkaRedriveSuite('redrive_speed');
  const { kafka, topics, raw, groups } = suite;
  let fixture: RedriveFixture;
  let redrive: RedriveService;
  beforeAll(() => ({ fixture, redrive } = suite.ready()));

  const times: string[] = [];
  async function timed<T>(step: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await work();
    times.push(`${step}: ${Math.round(performance.now() - started)} ms`);
    return result;
  }

  async function topicsFor(prefix: string) {
    const destination = uniqueName(prefix);
    const dlq = await topics.create(`${destination}.billing.dlq`, 3);
    const target = await topics.create(destination, 3);
    groups.push(`${dlq}.redrive`);
    return { destination, dlq, target };
  }

  async function round(dlq: string, approver: Approver, label: string) {
    const plan = await timed(`${label} plan`, () => redrive.plan({ source: dlq }));
    const approved = await timed(`${label} approve`, () => fixture.approve(redrive, plan, approver));
    return timed(`${label} execute`, () => redrive.execute(approved));
  }

  it('redrives 200 dead letters of one key in two rounds of 100, each once, and says how long each step took', async () => {
    const { destination, dlq, target } = await topicsFor('speed_k_orders');
    const parked = Array.from({ length: 200 }, (_, seq) =>
      parkedOrder(destination, 'billing', seq, 'author-1'),
    );
    await raw.send(parked);
    const ids = parked.map((p) => p.headers['msg.id']);

    const first = await round(dlq, 'jane', 'round 1');
    const second = await round(dlq, 'bob', 'round 2');
    process.stdout.write(
      `\nKafka redrive of 200 (load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(', ')}):\n  ${times.join('\n  ')}\n`,
    );

    expect([first, second].map((r) => [r.redriven, r.leftInSource])).toEqual([
      [100, 0],
      [100, 0],
    ]);
    expect(first.messages.map((m) => m.messageId)).toEqual(ids.slice(0, 100));
    expect(second.messages.map((m) => m.messageId)).toEqual(ids.slice(100));
    expect(await redrive.list([dlq])).toEqual([{ name: dlq, exists: true, depth: 0 }]);
    const reader = await new TopicReader(target, kafka).start();
    const copies = await reader.waitFor(200);
    await reader.stop();
    expect(copies.map((c) => c.headers['msg.id'])).toEqual(ids); // each once, in order (one key)
    const executed = (await fixture.history(dlq)).filter((e) => e.action === 'EXECUTE');
    expect(executed.map((e) => e.outcome)).toEqual(['STARTED', 'REDRIVEN', 'STARTED', 'REDRIVEN']);
  });

  it('reads and redrives a DLQ whose last record is a transaction marker', async () => {
    const { destination, dlq, target } = await topicsFor('speed_k_marker');
    const parked = [1, 2, 3].map((seq) => parkedOrder(destination, 'billing', seq, 'author-2'));
    await sendInTransaction(parked); // three records, then the commit marker: the high watermark is one past it
    const ids = parked.map((p) => p.headers['msg.id']);

    // The broker writes the marker after the commit returns: until then the records are not readable.
    await eventually(async () => (await redrive.list([dlq]))[0].depth === 4, 30_000, 100);
    const plan = await redrive.plan({ source: dlq });
    expect(plan.messages.map((m) => m.messageId)).toEqual(ids);
    const result = await redrive.execute(await fixture.approve(redrive, plan));
    expect(result).toMatchObject({ redriven: 3, leftInSource: 0 });
    const reader = await new TopicReader(target, kafka).start();
    expect((await reader.waitFor(3)).map((c) => c.headers['msg.id'])).toEqual(ids);
    await reader.stop();
    expect((await redrive.browse(dlq)).letters).toEqual([]);
  });

  async function sendInTransaction(messages: WireMessage[]): Promise<void> {
    const producer = kafka.producer({
      transactionalId: uniqueName('speed_tx'),
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    try {
      const transaction = await producer.transaction();
      await transaction.send({
        topic: messages[0].destination,
        messages: messages.map((m) => ({ key: m.key, value: m.body, headers: { ...m.headers } })),
      });
      await transaction.commit();
    } finally {
      await producer.disconnect();
    }
  }
});
