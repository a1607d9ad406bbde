import {
  baseDelay,
  computeRetryDelay,
  DEFAULT_BACKOFF,
  delayTiers,
  fullJitter,
  tierAtLeast,
  tierAtMost,
  ttlTiers,
} from './backoff';

/** A tiny seeded PRNG (mulberry32): uniform in [0, 1), the same sequence for the same seed. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = 0x5eed;

describe('backoff', () => {
  describe(baseDelay.name, () => {
    it('doubles from the initial delay and stops at the cap', () => {
      const delays = [1, 2, 3, 4, 5, 6, 7].map((attempt) => baseDelay(DEFAULT_BACKOFF, attempt));
      expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    });

    it('stays at the cap for huge attempts, where the power overflows to Infinity', () => {
      expect(baseDelay(DEFAULT_BACKOFF, 5000)).toBe(30000);
      expect(baseDelay({ ...DEFAULT_BACKOFF, initialDelayMs: 0 }, 5000)).toBe(0);
    });

    it('rounds a fractional delay down to whole ms', () => {
      expect(baseDelay({ initialDelayMs: 1500, multiplier: 1.5, maxDelayMs: 60000 }, 4)).toBe(5062);
    });

    it('treats attempts below 1 as the first', () => {
      expect(baseDelay(DEFAULT_BACKOFF, 0)).toBe(1000);
    });
  });

  describe(fullJitter.name, () => {
    it.each([
      [0, 0],
      [0.5, 500],
      [0.99999999, 1000],
    ])('maps random %p to %p ms for a 1000 ms delay', (random, expected) => {
      expect(fullJitter(1000, () => random)).toBe(expected);
    });

    it('clamps a misbehaving random source to [0, delay]', () => {
      expect(fullJitter(1000, () => 1)).toBe(1000);
      expect(fullJitter(1000, () => -0.5)).toBe(0);
    });

    it('returns 0 for a zero delay', () => {
      expect(fullJitter(0, () => 0.9)).toBe(0);
    });
  });

  describe(computeRetryDelay.name, () => {
    it('draws uniformly from [0, delay]', () => {
      const random = mulberry32(SEED);
      const draws = Array.from({ length: 20000 }, () => computeRetryDelay(DEFAULT_BACKOFF, 1, random));
      const buckets = new Array<number>(10).fill(0);
      for (const draw of draws) buckets[Math.min(9, Math.floor(draw / 100))]++;
      const mean = draws.reduce((sum, draw) => sum + draw, 0) / draws.length;

      expect(Math.abs(mean - 500)).toBeLessThanOrEqual(10);
      for (const count of buckets) expect(Math.abs(count / draws.length - 0.1)).toBeLessThanOrEqual(0.015);
      expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
      expect(Math.max(...draws)).toBeLessThanOrEqual(1000);
      expect(draws.every(Number.isInteger)).toBe(true);
    });

    it('gives the same sequence for the same seed', () => {
      const sequence = (seed: number) => {
        const random = mulberry32(seed);
        return Array.from({ length: 50 }, (_, i) => computeRetryDelay(DEFAULT_BACKOFF, (i % 6) + 1, random));
      };
      expect(sequence(SEED)).toEqual(sequence(SEED));
      expect(sequence(SEED)).not.toEqual(sequence(SEED + 1));
    });
  });

  describe(delayTiers.name, () => {
    it.each<[string, Parameters<typeof delayTiers>[0], number, number[]]>([
      [
        'default, 8 attempts (the cap deduplicated)',
        DEFAULT_BACKOFF,
        8,
        [1000, 2000, 4000, 8000, 16000, 30000],
      ],
      ['default, 3 attempts', DEFAULT_BACKOFF, 3, [1000, 2000]],
      ['default, 2 attempts', DEFAULT_BACKOFF, 2, [1000]],
      ['default, 1 attempt (still one tier)', DEFAULT_BACKOFF, 1, [1000]],
      ['default, a huge budget', DEFAULT_BACKOFF, 1e9, [1000, 2000, 4000, 8000, 16000, 30000]],
      ['constant (multiplier 1)', { ...DEFAULT_BACKOFF, multiplier: 1 }, 1e9, [1000]],
      ['no delay', { ...DEFAULT_BACKOFF, initialDelayMs: 0 }, 5, [0]],
      [
        '×1.5 up to 5000',
        { initialDelayMs: 1000, multiplier: 1.5, maxDelayMs: 5000 },
        10,
        [1000, 1500, 2250, 3375, 5000],
      ],
    ])('%s', (_name, backoff, maxAttempts, expected) => {
      expect(delayTiers(backoff, maxAttempts)).toEqual(expected);
    });
  });

  describe(ttlTiers.name, () => {
    it.each<[string, Parameters<typeof ttlTiers>[0], number, number[]]>([
      [
        'default, 8 attempts: 30 s and its halvings down to 100 ms',
        DEFAULT_BACKOFF,
        8,
        [117, 234, 468, 937, 1875, 3750, 7500, 15000, 30000],
      ],
      ['default, 3 attempts', DEFAULT_BACKOFF, 3, [125, 250, 500, 1000, 2000]],
      [
        'a largest delay under 100 ms: that one',
        { initialDelayMs: 80, multiplier: 1, maxDelayMs: 80 },
        5,
        [80],
      ],
      ['no delay: none', { ...DEFAULT_BACKOFF, initialDelayMs: 0 }, 5, []],
    ])('%s', (_name, backoff, maxAttempts, expected) => {
      expect(ttlTiers(backoff, maxAttempts)).toEqual(expected);
    });

    it('lets every delay up to the largest be waited as a sum of smaller and smaller tiers', () => {
      const tiers = ttlTiers(DEFAULT_BACKOFF, 8);
      for (let delay = 0; delay <= 30_000; delay += 7) {
        let rest = delay;
        let last = Infinity;
        for (let tier = tierAtMost(rest, tiers); tier !== undefined; tier = tierAtMost(rest, tiers)) {
          expect(tier).toBeLessThan(last);
          last = tier;
          rest = Math.min(rest - tier, tier - 1);
        }
        expect(rest).toBeLessThan(tiers[0]);
      }
    });
  });

  describe(tierAtMost.name, () => {
    it.each([
      [0, undefined],
      [999, undefined],
      [1000, 1000],
      [1999, 1000],
      [2000, 2000],
      [30000, 4000],
    ])('picks for %p ms the largest tier not longer: %p', (delayMs, expected) => {
      expect(tierAtMost(delayMs, [1000, 2000, 4000])).toBe(expected);
    });
  });

  describe(tierAtLeast.name, () => {
    it.each([
      [0, 1000],
      [1000, 1000],
      [1001, 2000],
      [3999, 4000],
      [30000, 4000],
    ])('picks for %p ms the smallest tier not shorter (else the largest): %p', (delayMs, expected) => {
      expect(tierAtLeast(delayMs, [1000, 2000, 4000])).toBe(expected);
    });

    it('refuses an empty ladder', () => {
      expect(() => tierAtLeast(1000, [])).toThrow(RangeError);
    });
  });
});
