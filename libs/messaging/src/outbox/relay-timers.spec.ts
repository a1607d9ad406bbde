import { systemClock } from '../common/clock';
import { RelayTimers } from './relay-timers';

function timers() {
  const wake = jest.fn();
  const wakeForHeldRows = jest.fn();
  return { wake, wakeForHeldRows, timers: new RelayTimers(systemClock, wake, wakeForHeldRows) };
}

describe(RelayTimers.name, () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-12-01T00:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  describe('startPoll', () => {
    it('wakes once per interval', () => {
      const { wake, timers: t } = timers();
      t.startPoll(1_000);
      jest.advanceTimersByTime(3_500);
      expect(wake).toHaveBeenCalledTimes(3);
    });
  });

  describe('retryIn', () => {
    it('keeps the later of two due times, so that every row failed so far is due when it fires', () => {
      const { wake, timers: t } = timers();
      t.retryIn(1_000);
      t.retryIn(500); // earlier: ignored
      jest.advanceTimersByTime(999);
      expect(wake).not.toHaveBeenCalled();
      t.retryIn(2_000); // later: replaces the pending one
      jest.advanceTimersByTime(1_000);
      expect(wake).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1_000);
      expect(wake).toHaveBeenCalledTimes(1);
    });

    it('sets a new wake-up once the previous one fired', () => {
      const { wake, timers: t } = timers();
      t.retryIn(100);
      jest.advanceTimersByTime(100);
      t.retryIn(50);
      jest.advanceTimersByTime(50);
      expect(wake).toHaveBeenCalledTimes(2);
    });
  });

  describe('wakeAt', () => {
    it('keeps the earlier of two times', () => {
      const { wakeForHeldRows, timers: t } = timers();
      const now = Date.now();
      t.wakeAt(now + 2_000);
      t.wakeAt(now + 3_000); // later: ignored
      t.wakeAt(now + 1_000); // earlier: replaces
      jest.advanceTimersByTime(1_000);
      expect(wakeForHeldRows).toHaveBeenCalledTimes(1);
      jest.advanceTimersByTime(5_000);
      expect(wakeForHeldRows).toHaveBeenCalledTimes(1);
    });
  });

  describe('clear', () => {
    it('cancels the poll and every pending wake-up', () => {
      const { wake, wakeForHeldRows, timers: t } = timers();
      t.startPoll(1_000);
      t.retryIn(500);
      t.wakeAt(Date.now() + 700);
      t.clear();
      jest.advanceTimersByTime(10_000);
      expect(wake).not.toHaveBeenCalled();
      expect(wakeForHeldRows).not.toHaveBeenCalled();
    });
  });
});
