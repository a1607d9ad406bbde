import { KafkaMessage } from 'kafkajs';
import { PartitionFlow } from './partition-flow';

const message = (offset: string) => ({ offset }) as KafkaMessage;

/** A flow whose commits wait until released, recording the offsets asked for. */
function flowWithCommits(answer: (offset: string) => boolean = () => true) {
  const commits: string[] = [];
  const releases: Array<() => void> = [];
  const flow = new PartitionFlow('t', 0, (offset) => {
    commits.push(offset);
    return new Promise<boolean>((resolve) => releases.push(() => resolve(answer(offset))));
  });
  const releaseAll = async () => {
    while (releases.length > 0) {
      releases.shift()!();
      await Promise.resolve();
      await Promise.resolve();
    }
  };
  return { flow, commits, releaseAll };
}

describe(PartitionFlow.name, () => {
  describe('take', () => {
    it("hands out everything queued in a lane at once, in the partition's order", () => {
      const { flow } = flowWithCommits();
      ['1', '2', '3'].forEach((o) => flow.enqueue('0', message(o)));
      flow.enqueue('1', message('4'));
      expect(flow.take('0').map((m) => m.offset)).toEqual(['1', '2', '3']);
      expect(flow.take('0')).toEqual([]);
      expect(flow.outstanding).toBe(4);
    });
  });

  describe('finish', () => {
    it('commits one offset at a time when asked, the latest contiguous one once the commit before is answered', async () => {
      const { flow, commits, releaseAll } = flowWithCommits();
      ['1', '2', '3'].forEach((o) => flow.enqueue(o === '2' ? '1' : '0', message(o)));
      const lane0 = flow.take('0');
      const lane1 = flow.take('1');
      flow.finish([lane0[0]], [true]);
      flow.commit();
      flow.finish([lane0[1]], [true]); // 3 settled, 2 not: still 1
      flow.commit();
      flow.finish(lane1, [true]);
      flow.commit(); // 1 is still being committed: nothing starts
      expect(commits).toEqual(['1']);
      await releaseAll();
      flow.commit();
      expect(commits).toEqual(['1', '3']);
      expect(flow.outstanding).toBe(0);
    });

    it('asks again with the next commit or flush after a failed commit', async () => {
      let fail = true;
      const { flow, commits, releaseAll } = flowWithCommits(() => !fail);
      flow.enqueue('0', message('1'));
      flow.finish(flow.take('0'), [true]);
      flow.commit();
      await releaseAll();
      fail = false;
      const flushed = flow.flush();
      await releaseAll();
      await flushed;
      expect(commits).toEqual(['1', '1']);
    });
  });

  describe('halt', () => {
    it('drops what is queued, hands out nothing more, and resumes at the first unsettled offset', () => {
      const { flow } = flowWithCommits();
      ['1', '2', '3'].forEach((o) => flow.enqueue('0', message(o)));
      const running = flow.take('0');
      flow.enqueue('1', message('4'));
      flow.halt(500);
      flow.finish(running, [true, false, false]);
      expect(flow.take('1')).toEqual([]);
      expect(flow.enqueue('0', message('5'))).toBe(false);
      expect(flow.outstanding).toBe(0);
      expect(flow.resumeAt()).toBe('2');
      expect(flow.holdDelayMs).toBe(500);
    });
  });

  describe('retire', () => {
    it('commits nothing more once retired', async () => {
      const { flow, commits } = flowWithCommits();
      flow.enqueue('0', message('1'));
      const running = flow.take('0');
      flow.retire();
      flow.finish(running, [true]);
      await flow.flush();
      expect(commits).toEqual([]);
    });
  });

  describe('whenAtMost', () => {
    it('resolves once enough of the outstanding messages finished', async () => {
      const { flow } = flowWithCommits();
      ['1', '2', '3'].forEach((o) => flow.enqueue('0', message(o)));
      const running = flow.take('0');
      let resolved = false;
      const waiting = flow.whenAtMost(1).then(() => (resolved = true));
      flow.finish(running.slice(0, 1), [true]);
      await Promise.resolve();
      expect(resolved).toBe(false);
      flow.finish(running.slice(1, 2), [true]);
      await waiting;
      expect(resolved).toBe(true);
    });
  });
});
