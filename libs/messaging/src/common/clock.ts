/** Stops a timer a `Clock` started; calling it again, or after the timer fired, does nothing. */
export type CancelTimer = () => void;

/**
 * Time and chance as the library sees them: the current time, timers, and the random draws that jitter its
 * backoffs. The library reads no other clock and starts no other timer; it is injected
 * (`getMessagingClockToken()`) so that its time behaviour is tested with a `FakeClock`, and `systemClock` is
 * the default.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once after `delayMs`. */
  setTimeout(callback: () => void, delayMs: number): CancelTimer;
  /** Calls `callback` every `intervalMs`. */
  setInterval(callback: () => void, intervalMs: number): CancelTimer;
  /** Resolves after `delayMs`. */
  sleep(delayMs: number): Promise<void>;
  /** Resolves on the event loop's next turn, once the work queued now (a query being sent, say) has run. */
  nextTurn(): Promise<void>;
  /** A uniform number in `[0, 1)`: the jitter of retry and reconnect backoffs. */
  random(): number;
}

/** The longest delay Node's timers take (2³¹−1 ms); a longer one would fire at once. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * Node's clock and timers and `Math.random`, looked up on each call (so that jest's fake timers replace them
 * where a test needs them). A delay beyond 2³¹−1 ms (about 24.8 days) is cut to it rather than firing at
 * once, as Node would.
 */
export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  setTimeout: (callback: () => void, delayMs: number): CancelTimer => {
    const timer = setTimeout(callback, timerDelay(delayMs));
    return () => clearTimeout(timer);
  },
  setInterval: (callback: () => void, intervalMs: number): CancelTimer => {
    const timer = setInterval(callback, timerDelay(intervalMs));
    return () => clearInterval(timer);
  },
  sleep: (delayMs: number) => new Promise<void>((resolve) => setTimeout(resolve, timerDelay(delayMs))),
  nextTurn: () => new Promise<void>((resolve) => setImmediate(resolve)),
  random: () => Math.random(),
});

function timerDelay(delayMs: number): number {
  return Math.min(MAX_TIMER_DELAY_MS, Math.max(0, delayMs));
}
