import { WireMessage } from '../../envelope/wire-message';
import { KafkajsScriptedCluster } from '../../../spec-support/kafkajs-scripted-cluster';
import { KafkajsPublisher } from './kafka-publisher';

/** One message for each of `partitions` of the cluster's topic. */
function messagesTo(cluster: KafkajsScriptedCluster, partitions: number[]): WireMessage[] {
  return partitions.map((p) => ({
    destination: cluster.topic,
    key: cluster.keyFor(p),
    headers: { 'msg.id': `m${p}` },
    body: Buffer.from(`to ${p}`),
  }));
}

describe(KafkajsPublisher.name, () => {
  describe('send', () => {
    it('is CONFIRMED when every partition was answered', async () => {
      const cluster = new KafkajsScriptedCluster('t', [1, 2]);
      const publisher = new KafkajsPublisher(cluster.kafka());

      const outcome = await publisher.send('t', messagesTo(cluster, [0, 1]));

      expect(outcome).toEqual({ status: 'CONFIRMED' });
      await publisher.close();
    });

    it('is CONFIRMED when a retry reaches the new leader of a partition whose leader failed', async () => {
      const cluster = new KafkajsScriptedCluster('t', [1, 2]);
      const publisher = new KafkajsPublisher(cluster.kafka());
      await publisher.connect();
      cluster.failThenMove(0, 3);

      const outcome = await publisher.send('t', messagesTo(cluster, [0, 1]));

      expect(outcome).toEqual({ status: 'CONFIRMED' });
      expect(cluster.produced.filter((c) => c.answered).flatMap((c) => c.partitions)).toEqual([1, 0]);
      await publisher.close();
    });

    it('is AMBIGUOUS when kafkajs resolves a send whose partition moved to a broker that had answered', async () => {
      const cluster = new KafkajsScriptedCluster('t', [1, 2]);
      const publisher = new KafkajsPublisher(cluster.kafka());
      await publisher.connect();
      cluster.failThenMove(0, 2);

      const outcome = await publisher.send('t', messagesTo(cluster, [0, 1]));

      // kafkajs never sent partition 0 again (kafkajs-produce-retry.contract.spec.ts): nothing confirms it.
      expect(outcome).toMatchObject({ status: 'AMBIGUOUS' });
      expect((outcome as { error: Error }).error.message).toMatch(/no broker answered for partition\(s\) 0/);
      await publisher.close();
    });
  });
});
