import { MessagePosition, RedriveService } from 'nest-reliable-messaging/redrive';
import { infraEnv } from '../../harness/infra';
import { uniqueName } from '../../harness/names';
import { useKafkaRedriveSuite } from './support/kafka-redrive-suite';
import { parkedOrder } from './support/parked-messages';
import { RedriveFixture } from './support/redrive-fixture';

const MIB = 1024 * 1024;
const LARGE = 800 * 1024;

/**
 * Issue 45, item 7 (review finding 6) on Kafka: large records at the head of a DLQ's partitions must not decide
 * how much a page or a plan holds. A read stops at the byte budget (16 MiB by default) with a prefix of the
 * time order, each partition read from its start, and says how many it did not read; headers beyond what a
 * view shows are counted, not rendered.
 */
describe('Reads of dead letters within a byte budget (Kafka)', () => {
  const suite = useKafkaRedriveSuite('budget_kafka');
  const { topics, raw, groups } = suite;
  let fixture: RedriveFixture;
  let redrive: RedriveService;
  beforeAll(() => ({ fixture, redrive } = suite.ready()));

  const offsetsIn = (positions: { position: MessagePosition }[], partition: number) =>
    positions.flatMap(({ position: p }) =>
      p.kind === 'partition' && p.partition === partition ? [Number(p.offset)] : [],
    );

  it('reads large heads of three partitions only up to 16 MiB, oldest first, and reports the rest', async () => {
    const destination = uniqueName('budget_k');
    const dlq = await topics.create(`${destination}.billing.dlq`, 3);
    await topics.create(destination, 3);
    groups.push(`${dlq}.redrive`);
    // 8 records of 800 KiB at the head of each partition (19 MiB in all), one record per batch; then small ones.
    const large = new Set<string>();
    for (let seq = 0; seq < 24; seq++) {
      const record = { ...parkedOrder(destination, 'billing', seq), body: Buffer.alloc(LARGE, 'x') };
      large.add(record.headers['msg.id']);
      await raw.send([record], seq % 3);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (let partition = 0; partition < 3; partition++) {
      await raw.send(
        Array.from({ length: 10 }, (_, i) => parkedOrder(destination, 'billing', 100 + partition * 10 + i)),
        partition,
      );
    }

    const read = await redrive.browse(dlq);
    expect(read.depth).toBe(54);
    expect(read.letters.length).toBeGreaterThan(0);
    expect(read.letters.length * LARGE).toBeLessThanOrEqual(16 * MIB);
    // Only the large ones, which are older than every small one: a prefix of the time order.
    expect(read.letters.every((l) => large.has(l.message.messageId ?? ''))).toBe(true);
    for (let partition = 0; partition < 3; partition++) {
      const offsets = offsetsIn(
        read.letters.map((l) => l.message),
        partition,
      );
      expect(offsets).toEqual(offsets.map((_, i) => i));
    }
    expect(read.cutOff).toEqual({
      reason: 'byte-budget',
      budgetBytes: 16 * MIB,
      notRead: 54 - read.letters.length,
    });

    // A plan from the head covers only what it read, and says so.
    const plan = await redrive.plan({ source: dlq });
    expect(plan.messages.length).toBeLessThanOrEqual(20);
    expect(plan.messages.every((m) => large.has(m.messageId ?? ''))).toBe(true);
    expect(plan.cutOff).toEqual({
      reason: 'byte-budget',
      budgetBytes: 16 * MIB,
      notRead: 54 - plan.messages.length,
    });

    // A configured budget of 2 MiB: at most two of them.
    const tight = fixture.service(
      { kind: 'kafka', brokers: infraEnv().kafkaBrokers, allowPlaintextLocal: true },
      { principal: 'redrive-admin', secret: 'test-secret' },
      { readBudgetBytes: 2 * MIB },
    );
    const few = await tight.browse(dlq);
    expect(few.letters.length).toBeGreaterThanOrEqual(1);
    expect(few.letters.length).toBeLessThanOrEqual(2);
    expect(few.cutOff?.notRead).toBe(54 - few.letters.length);
  });

  it('shows at most 64 headers of a header bomb and counts the rest', async () => {
    const destination = uniqueName('budget_k_headers');
    const dlq = await topics.create(`${destination}.billing.dlq`, 1);
    groups.push(`${dlq}.redrive`);
    const parked = parkedOrder(destination, 'billing', 1);
    const bomb = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`x-bomb-${i}`, 'v'.repeat(50)]));
    await raw.send([{ ...parked, headers: { ...bomb, ...parked.headers } }], 0);

    const [letter] = (await redrive.browse(dlq)).letters;
    expect(Object.keys(letter.headers)).toHaveLength(64);
    expect(letter.headers['msg.id']).toBe(parked.headers['msg.id']);
    const { 'msg.sealed-key': _sealed, ...shown } = parked.headers; // never shown
    expect(letter.headersNotShown).toBe(3_000 + Object.keys(shown).length - 64);
  });
});
