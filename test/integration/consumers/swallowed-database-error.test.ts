import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { EACH_DATABASE } from '../../harness/test-database';
import { DeadlockBallast, DeadlockRow, InnodbDeadlock, isDeadlock } from '../support/innodb-deadlock';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';
import { drainQueue, publishRaw } from '../support/rabbit-wire';
import { useRabbitSuite } from '../support/suite-resources';
import {
  AppliedOrder,
  FailingStatement,
  SwallowProbe,
  swallowingConsumer,
  settledCount,
  TakenKey,
} from '../support/swallowing-consumer.fixture';

const SEQS = Array.from({ length: 200 }, (_, i) => i + 1);
/** Every tenth message's handler swallows a database error that ended its transaction. */
const SWALLOWING = SEQS.filter((seq) => seq % 10 === 0);
const OTHERS = SEQS.filter((seq) => seq % 10 !== 0);

/**
 * Issue 26, defect 1. A handler that catches a database error and returns leaves a transaction that the
 * database has already ended: PostgreSQL aborts it at the error (COMMIT then answers ROLLBACK, without an
 * error); MariaDB rolls the whole transaction back on a deadlock (and later statements autocommit). The
 * batch used to be acked as handled while its inbox rows and its writes were gone, the neighbours' too.
 * Now the swallowing message fails (dead-lettered here: no retry policy), the others are applied once.
 */
describe.each(EACH_DATABASE)('A handler that swallows a database error (%s, RabbitMQ)', (_, dialect) => {
  const suite = useRabbitSuite('swallowed', dialect);
  let deadlock: InnodbDeadlock | undefined;
  afterAll(async () => deadlock?.close());

  /** PostgreSQL: a unique violation (the key is taken); MariaDB: a real deadlock, this transaction the victim. */
  const failing: FailingStatement =
    dialect === 'postgres'
      ? async (manager, key) => void (await manager.insert(TakenKey, { key }))
      : (manager, key) => (deadlock as InnodbDeadlock).provoke(manager, key);

  describe.each([
    ['the default batchSize', {}],
    ['batchSize 1', { batchSize: 1 }],
  ] as const)('with %s', (_label, consumers) => {
    test('fails the swallowing messages (dead-lettered) and applies every other one once, in order', async () => {
      const destination = uniqueName('swallow');
      const group = uniqueName('g');
      const queue = `${destination}.${group}`;
      suite.rabbit.track({ exchanges: [destination], queues: [queue, `${queue}.dlq`] });
      const keys = SWALLOWING.map((seq) => `${group}:${seq}`);
      const probe = new SwallowProbe();
      let open = () => undefined as void;
      probe.gate = new Promise<void>((resolve) => (open = resolve));
      const app = await createMessagingApp({
        schema: suite.schema,
        transport: rabbitTransport(),
        entities: [AppliedOrder, TakenKey, DeadlockRow, DeadlockBallast],
        providers: [
          { provide: SwallowProbe, useValue: probe },
          swallowingConsumer(orderPlaced(destination), group, failing),
        ],
        messaging: { relay: { enabled: false }, consumers },
      });
      suite.apps.push(app);
      if (dialect === 'postgres') {
        for (const key of keys)
          await suite.schema.query('insert into swallow_taken (key) values ($1)', [key]);
      } else {
        deadlock ??= new InnodbDeadlock(suite.schema);
        await deadlock.prepare(keys);
      }

      // Every handler waits until all 200 are queued, so that the lanes take them in batches.
      await publishRaw(
        await suite.rabbit.connect(),
        SEQS.map((seq) => orderMessage(destination, { customer: `c${seq % 5}`, seq })),
      );
      open();
      await eventually(async () => expect(await settledCount(app, group)).toBe(SEQS.length), 60_000);

      // Closing the consumer returns anything it has not acked: nothing may come back.
      suite.apps.splice(suite.apps.indexOf(app), 1);
      await app.close();
      const channel = await (await suite.rabbit.connect()).createChannel();
      expect((await channel.checkQueue(queue)).messageCount).toBe(0);
      await channel.close();

      const rows = await suite.schema.query<{ seq: number }>(
        'select seq from swallow_applied where consumer_group = $1 order by id',
        [group],
      );
      const applied = rows.map((row) => Number(row.seq));
      expect([...applied].sort((a, b) => a - b)).toEqual(OTHERS);
      for (let customer = 0; customer < 5; customer++) {
        const ofCustomer = applied.filter((seq) => seq % 5 === customer);
        expect(ofCustomer).toEqual([...ofCustomer].sort((a, b) => a - b));
      }
      const parked = await drainQueue(await suite.rabbit.connect(), `${queue}.dlq`);
      const parkedSeqs = parked.map((m) => (JSON.parse(m.content.toString()) as { seq: number }).seq);
      expect(parkedSeqs.sort((a, b) => a - b)).toEqual(SWALLOWING);
      // Classified as the error the handler swallowed, and named so (never its text).
      const code = dialect === 'postgres' ? '23505' : 'ER_LOCK_DEADLOCK';
      const codes = new Set(parked.map((m) => String(m.properties.headers?.['msg.failure-code'])));
      expect([...codes]).toEqual([`TransactionAbortedError/${code}`]);
      // At most twice because of a neighbour; once more only when a handler failed itself.
      for (const seq of OTHERS) expect(probe.calls.get(seq)).toBeLessThanOrEqual(2);
      // The test swallowed what it says it swallows (on MariaDB: our transaction was the deadlock's victim).
      expect(probe.swallowed.length).toBeGreaterThanOrEqual(SWALLOWING.length);
      if (dialect === 'mariadb')
        expect(probe.swallowed.filter((e) => !isDeadlock(e)).map(String)).toEqual([]);
    });
  });
});
