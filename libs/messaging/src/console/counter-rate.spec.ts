import { counterIncrease, CounterHistory, ratePerMinute } from './counter-rate';

const MIN = 60_000;

describe(counterIncrease.name, () => {
  it('adds the differences of a counter that only grows', () => {
    expect(
      counterIncrease([
        { at: 0, value: 10 },
        { at: 1, value: 15 },
        { at: 2, value: 40 },
      ]),
    ).toBe(30);
  });

  it('counts a counter that fell (a restart) from 0 again, as Prometheus does', () => {
    // 500 → 560 (+60), restart, 20 (+20 since the restart), 50 (+30)
    const readings = [
      { at: 0, value: 500 },
      { at: MIN, value: 560 },
      { at: 2 * MIN, value: 20 },
      { at: 3 * MIN, value: 50 },
    ];
    expect(counterIncrease(readings)).toBe(110);
  });

  it('is 0 for no reading or one', () => {
    expect(counterIncrease([])).toBe(0);
    expect(counterIncrease([{ at: 0, value: 9 }])).toBe(0);
  });
});

describe(ratePerMinute.name, () => {
  it('is the increase per minute over the readings’ span, once they span a minute', () => {
    expect(
      ratePerMinute([
        { at: 0, value: 0 },
        { at: 59_999, value: 10 },
      ]),
    ).toBeUndefined();
    expect(
      ratePerMinute([
        { at: 0, value: 0 },
        { at: 2 * MIN, value: 60 },
      ]),
    ).toBe(30);
  });

  it('survives a restart: no negative rate, no gap', () => {
    const readings = [
      { at: 0, value: 900 },
      { at: MIN, value: 960 },
      { at: 2 * MIN, value: 30 }, // restarted: 30 since
    ];
    expect(ratePerMinute(readings)).toBe(45);
  });
});

describe(CounterHistory.name, () => {
  it('rates each key over its readings of the window, and forgets older ones', () => {
    const history = new CounterHistory(5 * MIN);
    expect(history.read('a', 0, 0)).toBeUndefined();
    expect(history.read('b', 1_000, 0)).toBeUndefined();
    expect(history.read('a', 60, MIN)).toBe(60);
    expect(history.read('b', 5, MIN)).toBe(5); // b restarted
    // Ten minutes later the old readings are gone: one reading, no rate yet.
    expect(history.read('a', 600, 11 * MIN)).toBeUndefined();
    expect(history.read('a', 660, 12 * MIN)).toBe(60);
  });
});
