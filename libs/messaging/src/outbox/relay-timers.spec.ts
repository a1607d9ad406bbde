import { FakeClock } from '../common/fake-clock';
import { MAX_TIMER_DELAY_MS, RelayTimers } from './relay-timers';

function timers() {
  const wake = jest.fn();
  const wakeForHeldRows = jest.fn();
  const clock = new FakeClock();
  return { clock, wake, wakeForHeldRows, timers: new RelayTimers(clock, wake, wakeForHeldRows) };
}

describe(RelayTimers.name, () => {
  describe('startPoll', () => {
    it('wakes once per interval', async () => {
      const { clock, wake, timers: t } = timers();
      t.startPoll(1_000);
      await clock.advance(3_500);
      expect(wake).toHaveBeenCalledTimes(3);
    });
  });

  describe('retryIn', () => {
    it('keeps the later of two due times, so that every row failed so far is due when it fires', async () => {
      const { clock, wake, timers: t } = timers();
      t.retryIn(1_000);
      t.retryIn(500); // earlier: ignored
      await clock.advance(999);
      expect(wake).not.toHaveBeenCalled();
      t.retryIn(2_000); // later: replaces the pending one
      await clock.advance(1_000);
      expect(wake).not.toHaveBeenCalled();
      await clock.advance(1_000);
      expect(wake).toHaveBeenCalledTimes(1);
    });

    it('sets a new wake-up once the previous one fired', async () => {
      const { clock, wake, timers: t } = timers();
      t.retryIn(100);
      await clock.advance(100);
      t.retryIn(50);
      await clock.advance(50);
      expect(wake).toHaveBeenCalledTimes(2);
    });
  });

  describe('wakeAt', () => {
    it('keeps the earlier of two times', async () => {
      const { clock, wakeForHeldRows, timers: t } = timers();
      const now = clock.now();
      t.wakeAt(now + 2_000);
      t.wakeAt(now + 3_000); // later: ignored
      t.wakeAt(now + 1_000); // earlier: replaces
      await clock.advance(1_000);
      expect(wakeForHeldRows).toHaveBeenCalledTimes(1);
      await clock.advance(5_000);
      expect(wakeForHeldRows).toHaveBeenCalledTimes(1);
    });
  });

  describe('clear', () => {
    it('cancels the poll and every pending wake-up', async () => {
      const { clock, wake, wakeForHeldRows, timers: t } = timers();
      t.startPoll(1_000);
      t.retryIn(500);
      t.wakeAt(clock.now() + 700);
      t.clear();
      await clock.advance(10_000);
      expect(wake).not.toHaveBeenCalled();
      expect(wakeForHeldRows).not.toHaveBeenCalled();
    });
  });

  describe('scheduledIn', () => {
    it('replaces the scheduled wake-up set before, earlier or later', async () => {
      const { clock, wake, timers: t } = timers();
      t.scheduledIn(1_000);
      t.scheduledIn(3_000); // the latest look at the scheduled messages says when the next is due
      await clock.advance(1_000);
      expect(wake).not.toHaveBeenCalled();
      await clock.advance(2_000);
      expect(wake).toHaveBeenCalledTimes(1);
    });

    it('never asks for a timer longer than setTimeout keeps (it would fire at once)', () => {
      const { clock, timers: t } = timers();
      const setTimeout = jest.spyOn(clock, 'setTimeout');
      t.scheduledIn(60 * 24 * 60 * 60 * 1000); // 60 days
      expect(setTimeout).toHaveBeenCalledWith(expect.any(Function), MAX_TIMER_DELAY_MS);
    });
  });

  describe('markIn', () => {
    it('marks the waiting batch once, after the delay, unless a claim took it before', async () => {
      const clock = new FakeClock();
      const [wake, mark] = [jest.fn(), jest.fn()];
      const t = new RelayTimers(clock, wake, wake, wake, mark);
      t.markIn(20);
      await clock.advance(19);
      expect(mark).not.toHaveBeenCalled();
      await clock.advance(1);
      expect(mark).toHaveBeenCalledTimes(1);
      t.markIn(20);
      t.cancelMark(); // a claim took it
      t.markIn(20);
      t.clear(); // shutdown marks it itself
      await clock.advance(1_000);
      expect(mark).toHaveBeenCalledTimes(1);
      expect(wake).not.toHaveBeenCalled();
    });
  });
});
