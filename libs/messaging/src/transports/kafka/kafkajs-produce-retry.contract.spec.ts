/**
 * What kafkajs's producer does when a partition's leader moves during a send, checked against the installed
 * kafkajs: it resolves the send although no broker was sent the moved partition's messages
 * (`producer/sendMessages.js` keeps the answers of an earlier attempt and retries only leaders without one).
 * `ReliableProducer` checks every send against its partitions (`PartitionChoices`) for this reason. If an
 * upgrade of kafkajs fixes it, this spec fails: the check may then go (keep it while the old version can run).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { KafkajsScriptedCluster } from '../../../spec-support/kafkajs-scripted-cluster';

const kafkajsDir = path.dirname(require.resolve('kafkajs/package.json'));

describe('kafkajs producer retries the library guards against', () => {
  it('is the kafkajs line the guard was written against (2.2)', () => {
    const { version } = JSON.parse(readFileSync(path.join(kafkajsDir, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version).toMatch(/^2\.2\./);
  });

  // claim: C-31
  it('resolves a send whose partition moved to a broker that had answered, without sending it again', async () => {
    const cluster = new KafkajsScriptedCluster('t', [1, 2]);
    const producer = cluster
      .kafka()
      .producer({ idempotent: true, maxInFlightRequests: 1, retry: { retries: 3 } });
    await producer.connect();
    cluster.failThenMove(0, 2);

    const answers = await producer.send({
      topic: 't',
      acks: -1,
      messages: [0, 1].map((p) => ({ key: cluster.keyFor(p), value: `to ${p}` })),
    });

    // Partition 0 went once, to node 1, which failed; node 2 answered for partition 1 only.
    expect(cluster.produced).toEqual([
      { nodeId: 1, partitions: [0], answered: false },
      { nodeId: 2, partitions: [1], answered: true },
    ]);
    expect(answers.map((a) => a.partition)).toEqual([1]);
  });

  it('hands the partitioner the message objects given to send', async () => {
    const cluster = new KafkajsScriptedCluster('t', [1, 2]);
    const seen: unknown[] = [];
    const producer = cluster.kafka().producer({
      createPartitioner: () => (args) => (seen.push(args.message), 0),
    });
    await producer.connect();
    const message = { key: 'k', value: 'v' };
    await producer.send({ topic: 't', messages: [message] });
    expect(seen[0]).toBe(message);
  });
});
