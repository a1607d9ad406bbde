import { InvalidScheduleError } from '../errors/invalid-schedule.error';
import { beyondExact, MAX_SCHEDULE_AHEAD_MS, resolveSchedule, SCHEDULED_EXACT_COUNT_LIMIT } from './schedule';

const NOW = Date.parse('2026-12-06T12:00:00Z');

describe(resolveSchedule.name, () => {
  it('is undefined without deliverAt and delayMs: an ordinary message', () => {
    expect(resolveSchedule('OrderPlaced', {}, NOW)).toBeUndefined();
  });

  it('keeps a future deliverAt, and takes one not in the future as now (an ordinary message)', () => {
    const later = new Date(NOW + 60_000);
    expect(resolveSchedule('Reminder', { deliverAt: later }, NOW)).toEqual({ deliverAt: later });
    expect(resolveSchedule('Reminder', { deliverAt: new Date(NOW) }, NOW)).toBeUndefined();
    expect(resolveSchedule('Reminder', { deliverAt: new Date(NOW - 1) }, NOW)).toBeUndefined();
  });

  it('keeps a delay in whole milliseconds (rounded up), 0 being now', () => {
    expect(resolveSchedule('Reminder', { delayMs: 1_500 }, NOW)).toEqual({ delayMs: 1_500 });
    expect(resolveSchedule('Reminder', { delayMs: 0.2 }, NOW)).toEqual({ delayMs: 1 });
    expect(resolveSchedule('Reminder', { delayMs: 0 }, NOW)).toBeUndefined();
  });

  it.each([
    ['both', { deliverAt: new Date(NOW + 1_000), delayMs: 1_000 }, /not both/],
    [
      'a deliverAt that is not a Date',
      { deliverAt: '2027-01-01' },
      /valid Date, got the string '2027-01-01'/,
    ],
    ['an invalid Date', { deliverAt: new Date('nonsense') }, /valid Date, got an invalid Date/],
    ['a negative delay', { delayMs: -1 }, /0 or more, got -1/],
    ['NaN', { delayMs: Number.NaN }, /finite number .* got NaN/],
    ['Infinity', { delayMs: Number.POSITIVE_INFINITY }, /finite number .* got Infinity/],
    ['a delay given as a string', { delayMs: '1000' }, /finite number .* got the string '1000'/],
    ['a delay over ten years', { delayMs: MAX_SCHEDULE_AHEAD_MS + 1 }, /more than ten years ahead/],
    [
      'a deliverAt over ten years ahead',
      { deliverAt: new Date(NOW + MAX_SCHEDULE_AHEAD_MS + 1) },
      /ten years/,
    ],
  ])('refuses %s with InvalidScheduleError naming the event', (_, options, message) => {
    const refuse = () => resolveSchedule('Reminder', options, NOW);
    expect(refuse).toThrow(InvalidScheduleError);
    expect(refuse).toThrow(/^Cannot schedule Reminder: /);
    expect(refuse).toThrow(message);
  });

  it('takes exactly ten years ahead', () => {
    expect(resolveSchedule('Renewal', { delayMs: MAX_SCHEDULE_AHEAD_MS }, NOW)).toEqual({
      delayMs: MAX_SCHEDULE_AHEAD_MS,
    });
  });
});

describe(beyondExact.name, () => {
  const LIMIT = SCHEDULED_EXACT_COUNT_LIMIT;

  it('gives the exact count up to the limit, whatever the estimate says', () => {
    expect(beyondExact(0, 500)).toBe(0);
    expect(beyondExact(LIMIT, 1_000_000)).toBe(LIMIT);
  });

  it('gives the estimate above the limit, never below what was counted', () => {
    expect(beyondExact(LIMIT + 1, 98_765.4)).toBe(98_765);
    expect(beyondExact(LIMIT + 1, 5_000)).toBe(LIMIT + 1); // statistics behind
    expect(beyondExact(LIMIT + 1, undefined)).toBe(LIMIT + 1);
    expect(beyondExact(LIMIT + 1, -1)).toBe(LIMIT + 1); // PostgreSQL: never analysed
  });
});
