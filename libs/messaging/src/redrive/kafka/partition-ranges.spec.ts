import { Admin } from 'kafkajs';
import { pendingRange, pendingWhileListing, recordsIn, redriveGroupOf } from './partition-ranges';

/** kafkajs's answer for a topic the broker does not host (deleted, or not propagated yet). */
const unhosted = () =>
  Object.assign(new Error('This server does not host this topic-partition'), {
    type: 'UNKNOWN_TOPIC_OR_PARTITION',
  });

/** An admin whose offsets fail with `failures` first, then answer 5 pending records; `exists` for listTopics. */
function admin(failures: Error[], exists: () => boolean) {
  const fetchTopicOffsets = jest.fn(async () => {
    const failure = failures.shift();
    if (failure) throw failure;
    return [{ partition: 0, offset: '5', low: '0', high: '5' }];
  });
  return {
    fetchTopicOffsets,
    fetchOffsets: jest.fn(async () => [{ topic: 't.dlq', partitions: [] }]),
    listTopics: jest.fn(async () => (exists() ? ['t.dlq'] : [])),
  } as unknown as Admin & { fetchTopicOffsets: jest.Mock };
}

describe('partition ranges', () => {
  describe(pendingRange.name, () => {
    it('starts at the committed offset of the redrive group', () => {
      expect(pendingRange(0, 0n, 10n, 4n)).toEqual({ partition: 0, from: 4n, to: 10n });
    });

    it('starts at the log start when nothing was committed or retention deleted past the commit', () => {
      expect(pendingRange(1, 3n, 10n, -1n)).toEqual({ partition: 1, from: 3n, to: 10n });
      expect(pendingRange(1, 6n, 10n, 4n)).toEqual({ partition: 1, from: 6n, to: 10n });
    });

    it('is empty when everything was redriven', () => {
      expect(recordsIn([pendingRange(0, 0n, 10n, 10n), pendingRange(1, 0n, 5n, 2n)])).toBe(3);
    });
  });

  describe(pendingWhileListing.name, () => {
    const sleep = jest.fn(async () => undefined);

    it('counts a topic the broker hosts', async () => {
      await expect(
        pendingWhileListing(
          admin([], () => true),
          't.dlq',
          sleep,
        ),
      ).resolves.toBe(5);
    });

    it('is undefined for a topic deleted after the listing named it (another process deleting it)', async () => {
      await expect(
        pendingWhileListing(
          admin([unhosted()], () => false),
          't.dlq',
          sleep,
        ),
      ).resolves.toBe(undefined);
    });

    it('asks again about a topic created a moment ago, until its leader hosts it', async () => {
      const created = admin(
        [unhosted(), Object.assign(new Error('retries'), { cause: unhosted() })],
        () => true,
      );
      await expect(pendingWhileListing(created, 't.dlq', sleep)).resolves.toBe(5);
      expect(created.fetchTopicOffsets).toHaveBeenCalledTimes(3);
    });

    it('gives up on a topic still not hosted after 5 tries, and fails on any other error at once', async () => {
      const never = admin(Array.from({ length: 9 }, unhosted), () => true);
      await expect(pendingWhileListing(never, 't.dlq', sleep)).rejects.toThrow('does not host');
      expect(never.fetchTopicOffsets).toHaveBeenCalledTimes(5);
      const denied = admin([new Error('Not authorized')], () => true);
      await expect(pendingWhileListing(denied, 't.dlq', sleep)).rejects.toThrow('Not authorized');
      expect(denied.fetchTopicOffsets).toHaveBeenCalledTimes(1);
    });
  });

  describe(redriveGroupOf.name, () => {
    it('names one group per dead-letter topic', () => {
      expect(redriveGroupOf('orders.billing.dlq')).toBe('orders.billing.dlq.redrive');
    });
  });
});
