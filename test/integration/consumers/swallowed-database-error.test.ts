import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { EACH_DATABASE } from '../../harness/test-database';
import { rabbitTransport } from '../support/messaging-app';
import { orderMessage } from '../support/raw-messages';
import { drainQueue, publishRaw } from '../support/rabbit-wire';
import { useRabbitSuite } from '../support/suite-resources';
import {
  expectOthersApplied,
  expectSwallowedParked,
  SEQS,
  settledCount,
  startSwallowingApp,
  SwallowedFailure,
} from '../support/swallowing-consumer.fixture';

/**
 * Issue 26, defect 1. A handler that catches a database error and returns leaves a transaction that the
 * database has already ended: PostgreSQL aborts it at the error (COMMIT then answers ROLLBACK, without an
 * error); MariaDB rolls the whole transaction back on a deadlock (and later statements autocommit). The
 * batch used to be acked as handled while its inbox rows and its writes were gone, the neighbours' too.
 * Now the swallowing message fails (dead-lettered here: no retry policy), the others are applied once.
 */
describe.each(EACH_DATABASE)('A handler that swallows a database error (%s, RabbitMQ)', (_, dialect) => {
  const suite = useRabbitSuite('swallowed', dialect);
  /** PostgreSQL: a unique violation (the key is taken); MariaDB: a real deadlock, this transaction the victim. */
  const failure = new SwallowedFailure(dialect);
  afterAll(async () => failure.close());

  describe.each([
    ['the default batchSize', {}],
    ['batchSize 1', { batchSize: 1 }],
  ] as const)('with %s', (_label, consumers) => {
    // claim: C-36
    test('fails the swallowing messages (dead-lettered) and applies every other one once, in order', async () => {
      const destination = uniqueName('swallow');
      const group = uniqueName('g');
      const queue = `${destination}.${group}`;
      suite.rabbit.track({ exchanges: [destination], queues: [queue, `${queue}.dlq`] });
      const { schema } = suite;
      const transport = rabbitTransport();
      const { app, probe, open } = await startSwallowingApp({
        schema,
        transport,
        destination,
        group,
        failure,
        consumers,
      });
      suite.apps.push(app);

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

      await expectOthersApplied(schema, group);
      const parked = await drainQueue(await suite.rabbit.connect(), `${queue}.dlq`);
      const seen = parked.map((m) => ({
        seq: (JSON.parse(m.content.toString()) as { seq: number }).seq,
        code: String(m.properties.headers?.['msg.failure-code']),
      }));
      expectSwallowedParked(seen, failure, probe, dialect);
    });
  });
});
