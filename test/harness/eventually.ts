/**
 * Polls `probe` until it stops throwing (or returns true), then returns its last value. Tests wait for
 * conditions, never for fixed times.
 */
export async function eventually<T>(
  probe: () => Promise<T> | T,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== false) return value;
      lastError = new Error('condition still false');
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw lastError;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
