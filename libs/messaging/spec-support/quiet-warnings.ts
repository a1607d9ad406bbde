import { Logger } from '@nestjs/common';

/**
 * For each test of the `describe` it is called in: Nest's warnings silenced (a spec that reads them does so
 * through `jest.mocked(Logger.prototype.warn)`). Time and jitter come from a `FakeClock` the spec passes in.
 * Unit specs only; not part of the package.
 */
export function useQuietWarnings(): void {
  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
}
