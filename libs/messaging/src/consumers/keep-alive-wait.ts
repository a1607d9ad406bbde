import { Clock } from '../common/clock';
import { DeliveryControl } from '../transports/delivery-contract';

/** The longest an inline wait goes without a keep-alive (Kafka heartbeats). */
const KEEP_ALIVE_EVERY_MS = 1_000;

/**
 * Sleeps `delayMs` while a delivery is held (an inline retry, a message not due yet), keeping the consumer
 * alive; false when the consumer stops meanwhile.
 */
export async function waitKeepingAlive(
  clock: Clock,
  delayMs: number,
  control: DeliveryControl,
): Promise<boolean> {
  const until = clock.now() + delayMs;
  while (clock.now() < until) {
    if (control.isStopping()) return false;
    await clock.sleep(Math.min(KEEP_ALIVE_EVERY_MS, until - clock.now()));
    await control.keepAlive();
  }
  return !control.isStopping();
}
