import { ClusterBroker, FetchedPartition, RedriveCluster } from './kafkajs-cluster.patch';
import { readRanges, readRangesWithin } from './kafka-range-reader';

const record = (offset: number, isControlRecord = false) => ({
  offset: String(offset),
  timestamp: '0',
  key: null,
  value: Buffer.from(`v${offset}`),
  headers: {},
  isControlRecord,
  batchContext: { producerId: '-1', inTransaction: false },
});

/** One partition (0) of a topic whose log holds `log`; each fetch returns at most `perFetch` records. */
function fakeCluster(log: ReturnType<typeof record>[], perFetch = 100, failFirst = false) {
  const fetchedAt: string[] = [];
  let refreshed = 0;
  const broker = {
    fetch: async ({ topics }: Parameters<ClusterBroker['fetch']>[0]) => {
      const { fetchOffset } = topics[0].partitions[0];
      fetchedAt.push(fetchOffset);
      if (failFirst && fetchedAt.length === 1) throw Object.assign(new Error('moved'), { retriable: true });
      const messages = log.filter((r) => BigInt(r.offset) >= BigInt(fetchOffset)).slice(0, perFetch);
      const partition: FetchedPartition = { partition: 0, highWatermark: String(log.length), messages };
      return { responses: [{ topicName: 't', partitions: [partition] }] };
    },
    offsetCommit: async () => undefined,
  };
  const cluster: RedriveCluster = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    addTargetTopic: async () => undefined,
    refreshMetadata: async () => void refreshed++,
    findLeaderForPartitions: () => ({ '1': [0] }),
    findBroker: async () => broker,
    findGroupCoordinator: async () => broker,
  };
  return { cluster, fetchedAt, refreshed: () => refreshed };
}

const offsets = (read: Map<number, { offset: string }[]>) => read.get(0)?.map((m) => m.offset);

describe(readRanges.name, () => {
  it('reads a range fetch by fetch, from its start to its end', async () => {
    const { cluster, fetchedAt } = fakeCluster(
      [0, 1, 2, 3, 4, 5].map((o) => record(o)),
      2,
    );
    const read = await readRanges(cluster, 't', [{ partition: 0, from: 1n, to: 5n }], 1_000);
    expect(offsets(read)).toEqual(['1', '2', '3', '4']);
    expect(fetchedAt).toEqual(['1', '3']);
  });

  it('ends at a control record at the end of the range instead of waiting for its offset', async () => {
    const { cluster, fetchedAt } = fakeCluster([record(0), record(1), record(2, true)]);
    const read = await readRanges(cluster, 't', [{ partition: 0, from: 0n, to: 3n }], 1_000);
    expect(offsets(read)).toEqual(['0', '1']);
    expect(fetchedAt).toEqual(['0']);
  });

  it('ends where the partition holds nothing more (a compacted tail, or the range past its end)', async () => {
    const { cluster, fetchedAt } = fakeCluster([record(0), record(1)]);
    const read = await readRanges(cluster, 't', [{ partition: 0, from: 0n, to: 9n }], 1_000);
    expect(offsets(read)).toEqual(['0', '1']);
    expect(fetchedAt).toEqual(['0', '2']);
  });

  it('looks the leader up again when a fetch fails with a retriable error', async () => {
    const { cluster, fetchedAt, refreshed } = fakeCluster([record(0)], 100, true);
    const read = await readRanges(cluster, 't', [{ partition: 0, from: 0n, to: 1n }], 1_000);
    expect(offsets(read)).toEqual(['0']);
    expect([fetchedAt, refreshed()]).toEqual([['0', '0'], 1]);
  });

  it('reads nothing for empty ranges', async () => {
    const { cluster, fetchedAt } = fakeCluster([record(0)]);
    expect(await readRanges(cluster, 't', [{ partition: 0, from: 1n, to: 1n }], 1_000)).toEqual(new Map());
    expect(fetchedAt).toEqual([]);
  });
});

describe(readRangesWithin.name, () => {
  it('stops a range at the first record its budget refuses, and fetches no more than it has left', async () => {
    const { cluster, fetchedAt } = fakeCluster(
      [0, 1, 2, 3, 4, 5].map((o) => record(o)),
      2,
    );
    let left = 3;
    const budget = {
      admit: () => left-- > 0,
      get remainingBytes() {
        return 1;
      },
    };
    const read = await readRangesWithin(
      cluster,
      't',
      [{ partition: 0, from: 0n, to: 6n }],
      1_000,
      () => budget,
    );
    expect(read.get(0)?.messages.map((m) => m.offset)).toEqual(['0', '1', '2']);
    expect(read.get(0)?.cut).toBe(true);
    expect(fetchedAt).toEqual(['0', '2']);
  });
});
