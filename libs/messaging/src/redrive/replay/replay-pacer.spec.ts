import { PacerClock, ReplayPacer } from './replay-pacer';

/** A virtual clock: a sleep moves it on at once (and by 1 ms less than asked, once, to test the re-check). */
function virtualClock(shortSleeps = false): PacerClock & { time: number; sleeps: number } {
  const clock = {
    time: 1_000_000,
    sleeps: 0,
    now: () => clock.time,
    sleep: async (ms: number) => {
      clock.sleeps++;
      clock.time += shortSleeps && clock.sleeps % 2 === 1 ? Math.max(0, ms - 1) : ms;
    },
  };
  return clock;
}

/** The most admissions any span [t, t + 1000) holds. */
function mostPerSecond(times: readonly number[]): number {
  return Math.max(...times.map((t) => times.filter((u) => u >= t && u < t + 1000).length));
}

describe('ReplayPacer', () => {
  it.each([1, 3, 7, 100])(
    'lets at most %i through in any second, counted over 50 admissions',
    async (rate) => {
      const clock = virtualClock();
      const pacer = new ReplayPacer(rate, clock);
      const times: number[] = [];
      for (let i = 0; i < 50; i++) times.push(await pacer.admit());
      expect(mostPerSecond(times)).toBeLessThanOrEqual(rate);
      // And no slower than asked: 50 admissions take about 49 intervals.
      expect(times[49] - times[0]).toBeLessThanOrEqual(Math.ceil((49 * 1000) / rate) + 49);
    },
  );

  it('waits again when a sleep wakes early', async () => {
    const clock = virtualClock(true);
    const pacer = new ReplayPacer(4, clock);
    const times: number[] = [];
    for (let i = 0; i < 12; i++) times.push(await pacer.admit());
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(250);
    expect(mostPerSecond(times)).toBeLessThanOrEqual(4);
  });

  it('gives no burst after a slow publish', async () => {
    const clock = virtualClock();
    const pacer = new ReplayPacer(10, clock);
    await pacer.admit();
    clock.time += 5_000; // a publish that took five seconds
    const times = [await pacer.admit(), await pacer.admit(), await pacer.admit()];
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(100);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(100);
  });
});
