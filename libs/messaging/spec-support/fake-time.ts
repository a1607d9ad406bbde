import { Logger } from '@nestjs/common';

/**
 * For each test of the `describe` it is called in: jest's fake timers from a fixed date (the library's
 * `systemClock` follows them), `Math.random` at 0.5 (every full-jitter draw is half its ceiling) and Nest's
 * warnings silenced. Unit specs only; not part of the package.
 */
export function useFakeTime(now = new Date('2026-12-01T00:00:00Z')): void {
  beforeEach(() => {
    jest.useFakeTimers({ now });
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });
}
