import { Clock } from '../src/common/clock';
import { FakeClock } from '../src/common/fake-clock';

/**
 * `clock` for a relay over fake stores: the relay yields a turn between starting a claim and publishing (so
 * that the claim reaches the database first); with nothing real to let through, the turn is a microtask, as
 * a statement's answer is. Unit specs only.
 */
export function turnless(clock: FakeClock): Clock {
  return {
    now: () => clock.now(),
    setTimeout: (callback, delayMs) => clock.setTimeout(callback, delayMs),
    setInterval: (callback, intervalMs) => clock.setInterval(callback, intervalMs),
    sleep: (delayMs) => clock.sleep(delayMs),
    nextTurn: () => Promise.resolve(),
    random: () => clock.random(),
  };
}
