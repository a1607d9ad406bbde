import fc from 'fast-check';
import { KeyedLanes } from './keyed-lanes';

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(error: Error): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every pending promise callback run (one macrotask turn); no time passes. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Tasks whose end the test decides, recording when each starts and how many run at once. */
class Tasks {
  readonly started: string[] = [];
  readonly finished: string[] = [];
  private readonly gates = new Map<string, Deferred>();
  private running = 0;
  maxRunning = 0;

  /** A task named `name` that runs until `finish(name)` or `fail(name)`. */
  task(name: string): () => Promise<void> {
    const gate = deferred();
    this.gates.set(name, gate);
    return async () => {
      this.started.push(name);
      this.running += 1;
      this.maxRunning = Math.max(this.maxRunning, this.running);
      try {
        await gate.promise;
      } finally {
        this.running -= 1;
        this.finished.push(name);
      }
    };
  }

  finish(name: string): void {
    this.gates.get(name)!.resolve();
  }

  fail(name: string): void {
    this.gates.get(name)!.reject(new Error(`${name} failed`));
  }
}

describe(KeyedLanes.name, () => {
  describe('run', () => {
    it('runs the tasks of one key one at a time, in the order they were queued', async () => {
      const lanes = new KeyedLanes(4);
      const tasks = new Tasks();
      for (const name of ['a1', 'a2', 'a3']) void lanes.run('a', tasks.task(name));

      await flush();
      expect(tasks.started).toEqual(['a1']);
      tasks.finish('a1');
      await flush();
      expect(tasks.started).toEqual(['a1', 'a2']);
      tasks.finish('a2');
      await flush();
      expect(tasks.started).toEqual(['a1', 'a2', 'a3']);
      tasks.finish('a3');
      await flush();
      expect(tasks.finished).toEqual(['a1', 'a2', 'a3']);
      expect(tasks.maxRunning).toBe(1);
    });

    it('does not start a task synchronously', () => {
      const lanes = new KeyedLanes(1);
      const task = jest.fn(async () => undefined);
      void lanes.run('a', task);
      expect(task).not.toHaveBeenCalled();
    });

    it('runs tasks of different keys side by side', async () => {
      const lanes = new KeyedLanes(3);
      const tasks = new Tasks();
      void lanes.run('a', tasks.task('a1'));
      void lanes.run('b', tasks.task('b1'));
      void lanes.run('c', tasks.task('c1'));

      await flush();
      expect(tasks.started).toEqual(['a1', 'b1', 'c1']);
      expect(tasks.maxRunning).toBe(3);
    });

    it('lets a key advance while another key is blocked', async () => {
      const lanes = new KeyedLanes(2);
      const tasks = new Tasks();
      void lanes.run('slow', tasks.task('slow1'));
      for (const name of ['fast1', 'fast2', 'fast3']) void lanes.run('fast', tasks.task(name));

      for (const name of ['fast1', 'fast2', 'fast3']) {
        await flush();
        tasks.finish(name);
      }
      await flush();
      expect(tasks.finished).toEqual(['fast1', 'fast2', 'fast3']);
      expect(tasks.started).toEqual(['slow1', 'fast1', 'fast2', 'fast3']);
    });

    it('runs at most `concurrency` tasks at once and starts a waiting key when one ends', async () => {
      const lanes = new KeyedLanes(2);
      const tasks = new Tasks();
      for (const key of ['a', 'b', 'c', 'd']) void lanes.run(key, tasks.task(key));

      await flush();
      expect(tasks.started).toEqual(['a', 'b']);
      tasks.finish('b');
      await flush();
      expect(tasks.started).toEqual(['a', 'b', 'c']);
      tasks.finish('a');
      await flush();
      expect(tasks.started).toEqual(['a', 'b', 'c', 'd']);
      tasks.finish('c');
      tasks.finish('d');
      await flush();
      expect(tasks.maxRunning).toBe(2);
    });

    it('never goes beyond the limit with many keys and tasks ending in any order', async () => {
      const concurrency = 3;
      const lanes = new KeyedLanes(concurrency);
      const tasks = new Tasks();
      const names: string[] = [];
      for (let i = 0; i < 40; i += 1) {
        const name = `k${i % 7}-${i}`;
        names.push(name);
        void lanes.run(`k${i % 7}`, tasks.task(name));
      }

      // Finish whatever runs, newest first, until everything has run.
      while (tasks.finished.length < names.length) {
        await flush();
        const running = tasks.started.filter((name) => !tasks.finished.includes(name));
        expect(running.length).toBeLessThanOrEqual(concurrency);
        running.reverse().forEach((name) => tasks.finish(name));
        await flush();
      }
      expect(tasks.maxRunning).toBe(concurrency);
      expect([...tasks.started].sort()).toEqual([...names].sort());
      for (let key = 0; key < 7; key += 1) {
        const lane = names.filter((name) => name.startsWith(`k${key}-`));
        expect(tasks.started.filter((name) => lane.includes(name))).toEqual(lane);
      }
    });

    it('goes on with a lane after a task rejects', async () => {
      const lanes = new KeyedLanes(1);
      const tasks = new Tasks();
      void lanes.run('a', tasks.task('a1'));
      void lanes.run('a', tasks.task('a2'));

      await flush();
      tasks.fail('a1');
      await flush();
      expect(tasks.started).toEqual(['a1', 'a2']);
      tasks.finish('a2');
      await expect(lanes.drain()).resolves.toBeUndefined();
    });

    it('goes on with a lane after a task throws synchronously', async () => {
      const lanes = new KeyedLanes(1);
      const after = jest.fn(async () => undefined);
      void lanes.run('a', () => {
        throw new Error('boom');
      });
      void lanes.run('a', after);

      await lanes.drain();
      expect(after).toHaveBeenCalledTimes(1);
    });

    it('frees the slot of a failed task for other keys', async () => {
      const lanes = new KeyedLanes(1);
      const tasks = new Tasks();
      void lanes.run('a', tasks.task('a1'));
      void lanes.run('b', tasks.task('b1'));

      await flush();
      expect(tasks.started).toEqual(['a1']);
      tasks.fail('a1');
      await flush();
      expect(tasks.started).toEqual(['a1', 'b1']);
      tasks.finish('b1');
      await lanes.drain();
    });

    it('starts a key again after its lane emptied', async () => {
      const lanes = new KeyedLanes(1);
      const tasks = new Tasks();
      void lanes.run('a', tasks.task('a1'));
      await flush();
      tasks.finish('a1');
      await lanes.drain();

      void lanes.run('a', tasks.task('a2'));
      await flush();
      expect(tasks.started).toEqual(['a1', 'a2']);
      tasks.finish('a2');
      await lanes.drain();
      expect(tasks.finished).toEqual(['a1', 'a2']);
    });
  });

  describe('slot handover', () => {
    it('gives a freed slot to the first waiter, not to a task that arrives meanwhile', async () => {
      const lanes = new KeyedLanes(1);
      const tasks = new Tasks();
      void lanes.run('a', tasks.task('A'));
      void lanes.run('b', tasks.task('B'));
      await flush();
      tasks.finish('A');
      void lanes.run('c', tasks.task('C'));
      await flush();
      expect(tasks.started).toEqual(['A', 'B']);
      tasks.finish('B');
      await flush();
      tasks.finish('C');
      await lanes.drain();
      expect(tasks.started).toEqual(['A', 'B', 'C']);
      expect(tasks.maxRunning).toBe(1);
    });
  });

  describe('shares', () => {
    it("lets another share's keys run while one share's tasks hold every slot of theirs", async () => {
      const lanes = new KeyedLanes(2);
      const tasks = new Tasks();
      // Tenant "down": its tasks wait (its database does not answer) and fill its two slots.
      for (const name of ['down-a', 'down-b', 'down-c']) void lanes.run(name, tasks.task(name), 'down');
      for (const name of ['up-a', 'up-b', 'up-c']) void lanes.run(name, tasks.task(name), 'up');

      await flush();
      expect(tasks.started).toEqual(['down-a', 'down-b', 'up-a', 'up-b']);
      tasks.finish('up-a');
      await flush();
      expect(tasks.started).toContain('up-c');
      expect(tasks.started).not.toContain('down-c');
      tasks.finish('down-a');
      await flush();
      expect(tasks.started).toContain('down-c');
      ['down-b', 'down-c', 'up-b', 'up-c'].forEach((name) => tasks.finish(name));
      await lanes.drain();
    });

    it('keeps each share within the limit, and each key in order, with tasks ending in any order', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 3 }),
          fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 4 })), {
            minLength: 1,
            maxLength: 30,
          }),
          fc.array(fc.nat(), { minLength: 1, maxLength: 60 }),
          async (concurrency, queued, picks) => {
            const lanes = new KeyedLanes(concurrency);
            const tasks = new Tasks();
            const names = queued.map(([share, key], i) => `s${share}/k${key}#${i}`);
            names.forEach((name) => {
              const [share, key] = name.split('#')[0].split('/');
              void lanes.run(`${share}/${key}`, tasks.task(name), share);
            });
            await flush();
            for (let turn = 0; tasks.finished.length < names.length; turn += 1) {
              const running = tasks.started.filter((name) => !tasks.finished.includes(name));
              for (const share of ['s0', 's1', 's2']) {
                const ofShare = running.filter((name) => name.startsWith(`${share}/`));
                expect(ofShare.length).toBeLessThanOrEqual(concurrency);
                // A share with work queued and a slot free is never left waiting for another share.
                const queuedOfShare = names.filter(
                  (name) => name.startsWith(`${share}/`) && !tasks.started.includes(name),
                );
                const keysRunning = new Set(ofShare.map((name) => name.split('#')[0]));
                const startable = queuedOfShare.some((name) => !keysRunning.has(name.split('#')[0]));
                if (startable) expect(ofShare.length).toBe(concurrency);
              }
              expect(running.length).toBeGreaterThan(0);
              tasks.finish(running[picks[turn % picks.length] % running.length]);
              await flush();
            }
            for (const key of new Set(names.map((name) => name.split('#')[0]))) {
              const ofKey = names.filter((name) => name.startsWith(`${key}#`));
              expect(tasks.started.filter((name) => ofKey.includes(name))).toEqual(ofKey);
            }
          },
        ),
        { numRuns: 200 },
      );
    });
  });

  describe('drain', () => {
    it('resolves at once when nothing was queued', async () => {
      await expect(new KeyedLanes(2).drain()).resolves.toBeUndefined();
    });

    it('resolves only after every task queued so far has finished', async () => {
      const lanes = new KeyedLanes(2);
      const tasks = new Tasks();
      void lanes.run('a', tasks.task('a1'));
      void lanes.run('a', tasks.task('a2'));
      void lanes.run('b', tasks.task('b1'));
      void lanes.run('c', tasks.task('c1'));

      let drained = false;
      const drain = lanes.drain().then(() => {
        drained = true;
      });
      for (const name of ['a1', 'b1', 'a2']) {
        await flush();
        tasks.finish(name);
        await flush();
        expect(drained).toBe(false);
      }
      tasks.finish('c1');
      await drain;
      expect(drained).toBe(true);
      expect([...tasks.finished].sort()).toEqual(['a1', 'a2', 'b1', 'c1']);
    });

    it('also waits for a task that failed', async () => {
      const lanes = new KeyedLanes(1);
      const tasks = new Tasks();
      void lanes.run('a', tasks.task('a1'));

      let drained = false;
      const drain = lanes.drain().then(() => {
        drained = true;
      });
      await flush();
      expect(drained).toBe(false);
      tasks.fail('a1');
      await drain;
      expect(tasks.finished).toEqual(['a1']);
    });
  });
});
