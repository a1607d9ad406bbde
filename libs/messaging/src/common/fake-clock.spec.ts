import { FakeClock } from './fake-clock';

describe(FakeClock.name, () => {
  describe('advance', () => {
    it('fires timers that fall due, in order of their time, each at its own time', async () => {
      const clock = new FakeClock(1_000);
      const fired: Array<[string, number]> = [];
      clock.setTimeout(() => fired.push(['b', clock.now()]), 200);
      clock.setTimeout(() => fired.push(['a', clock.now()]), 100);
      clock.setTimeout(() => fired.push(['late', clock.now()]), 500);
      await clock.advance(300);
      expect(fired).toEqual([
        ['a', 1_100],
        ['b', 1_200],
      ]);
      expect(clock.now()).toBe(1_300);
      expect(clock.pendingTimers).toBe(1);
    });

    it('fires an interval once per period until cancelled', async () => {
      const clock = new FakeClock(0);
      const at: number[] = [];
      const cancel = clock.setInterval(() => at.push(clock.now()), 100);
      await clock.advance(350);
      cancel();
      await clock.advance(1_000);
      expect(at).toEqual([100, 200, 300]);
      expect(clock.pendingTimers).toBe(0);
    });

    it('never fires a cancelled timer', async () => {
      const clock = new FakeClock(0);
      const callback = jest.fn();
      clock.setTimeout(callback, 10)();
      await clock.advance(100);
      expect(callback).not.toHaveBeenCalled();
    });

    it('lets the work a timer started run before the next one fires (a timer set from a timer fires too)', async () => {
      const clock = new FakeClock(0);
      const steps: string[] = [];
      clock.setTimeout(() => {
        void Promise.resolve().then(() => {
          steps.push('first settled');
          clock.setTimeout(() => steps.push('second'), 10);
        });
      }, 10);
      await clock.advance(30);
      expect(steps).toEqual(['first settled', 'second']);
    });

    it('lets the work queued before it start its timer first, then fires that timer', async () => {
      const clock = new FakeClock(0);
      const fired: number[] = [];
      void Promise.resolve()
        .then(() => undefined)
        .then(() => clock.setTimeout(() => fired.push(clock.now()), 100));
      await clock.advance(100);
      expect(fired).toEqual([100]);
    });
  });

  describe('random', () => {
    it('answers 0.5 until set, then the value set, or each draw of the source set', () => {
      const clock = new FakeClock();
      expect([clock.random(), clock.random()]).toEqual([0.5, 0.5]);
      clock.setRandom(0.999);
      expect(clock.random()).toBe(0.999);
      const draws = [0.1, 0.2];
      clock.setRandom(() => draws.shift() ?? 0);
      expect([clock.random(), clock.random(), clock.random()]).toEqual([0.1, 0.2, 0]);
    });
  });

  describe('sleep', () => {
    it('resolves once time has been advanced past the delay, not before', async () => {
      const clock = new FakeClock(0);
      let woke = false;
      void clock.sleep(50).then(() => (woke = true));
      await clock.advance(49);
      expect(woke).toBe(false);
      await clock.advance(1);
      expect(woke).toBe(true);
    });
  });
});
