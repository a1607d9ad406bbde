/**
 * The kafkajs internals the Kafka redrive leans on (`kafkajs-cluster.patch.ts`), checked against the
 * installed kafkajs: the `Kafka` instance's cluster factory, the cluster's and the broker's methods, the
 * shape of a Fetch request and an OffsetCommit without a member, and the consumer's `Batch`. If an upgrade
 * of kafkajs changes any of this, this spec fails and says which assumption broke.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { fetchedBatch, redriveCluster } from './kafkajs-cluster.patch';

const kafkajsDir = path.dirname(require.resolve('kafkajs/package.json'));
const kafkajsSource = (file: string) => readFileSync(path.join(kafkajsDir, 'src', file), 'utf8');
/* eslint-disable-next-line @typescript-eslint/no-require-imports -- kafkajs's internals have no typed entry point */
const Broker = require(path.join(kafkajsDir, 'src/broker/index.js')) as {
  prototype: Record<string, unknown>;
};

const record = (offset: number, extra: Record<string, unknown> = {}) => ({
  offset: String(offset),
  timestamp: '0',
  key: Buffer.from('k'),
  value: Buffer.from(`v${offset}`),
  headers: {},
  isControlRecord: false,
  batchContext: { producerId: '-1', inTransaction: false },
  ...extra,
});

describe('kafkajs internals the Kafka redrive relies on', () => {
  it("makes a cluster of the Kafka instance's brokers and credentials without connecting", () => {
    const kafka = new Kafka({ clientId: 'contract', brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING });
    const cluster = redriveCluster(kafka) as unknown as Record<string, unknown>;
    for (const method of [
      'connect',
      'disconnect',
      'addTargetTopic',
      'refreshMetadata',
      'findLeaderForPartitions',
      'findBroker',
      'findGroupCoordinator',
    ]) {
      expect([method, typeof cluster[method]]).toEqual([method, 'function']);
    }
    expect((cluster.isConnected as () => boolean)()).toBe(false);
  });

  it('fetches by topic, partition and fetchOffset, and commits with a generation and a member id', () => {
    expect(typeof Broker.prototype.fetch).toBe('function');
    expect(typeof Broker.prototype.offsetCommit).toBe('function');
    expect(kafkajsSource('protocol/requests/fetch/v11/request.js')).toMatch(
      /currentLeaderEpoch = -1,\s+fetchOffset,/,
    );
    expect(kafkajsSource('protocol/requests/fetch/v11/response.js')).toContain('highWatermark:');
    const commit = kafkajsSource('protocol/requests/offsetCommit/v5/request.js');
    expect(commit).toMatch(/writeInt32\(groupGenerationId\)\s+\.writeString\(memberId\)/);
  });

  it("gives what kafkajs's consumer would: no records before the offset, no control records, no aborted ones", () => {
    const fetched = fetchedBatch('t', 4n, {
      partition: 0,
      highWatermark: '10',
      messages: [
        record(3),
        record(4),
        record(5, { batchContext: { producerId: '9', inTransaction: true } }), // aborted below
        record(6, {
          isControlRecord: true,
          key: Buffer.from([0, 0, 0, 0]),
          batchContext: { producerId: '9', inTransaction: true },
        }),
        record(7),
        record(8, { isControlRecord: true, key: Buffer.from([0, 0, 0, 1]) }),
      ],
      abortedTransactions: [{ producerId: '9', firstOffset: '5' }],
    } as never);
    expect(fetched.messages.map((m) => m.offset)).toEqual(['4', '7']);
    expect(fetched.lastOffset).toBe('8');
  });

  it('says when nothing was fetched at or after the offset', () => {
    expect(fetchedBatch('t', 4n, { partition: 0, highWatermark: '4', messages: [record(3)] })).toEqual({
      messages: [],
      lastOffset: undefined,
    });
  });
});
