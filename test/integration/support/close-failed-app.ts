import { INestApplicationContext } from '@nestjs/common';

/**
 * Closes an application whose `init()` failed. Nest's `close()` first awaits the initialization, so after a
 * failed bootstrap it rejects at once and stops nothing (timers, pools, broker connections keep running);
 * forgetting the failed initialization lets it run the shutdown hooks.
 */
export async function closeFailedApp(app: INestApplicationContext): Promise<void> {
  (app as unknown as { initializationPromise?: Promise<void> }).initializationPromise = undefined;
  await app.close().catch(() => undefined);
}
