import { Logger } from '@nestjs/common';
import { RedriveService } from '../redrive/redrive.service';
import { DeadLetterQueueInfo } from '../redrive/redrive-result';
import { OverviewQueue } from './views/overview-views';

/** At most this many queues' ages are kept between refreshes (the console lists a configured few). */
const MAX_KNOWN = 1_000;

/**
 * Since when each non-empty DLQ's oldest message waits: the earliest last failure among the first messages
 * (RabbitMQ: the head, which is the oldest; Kafka: the first of each partition, up to 20). A DLQ that cannot
 * be read keeps its depth, without an age (the DLQ's page says why).
 *
 * On RabbitMQ a page's own refresh (`refresh`) reads no DLQ: every read of a quorum queue's head counts
 * toward its delivery limit (20 by default on 4.x, then the message is dropped), and an idle tab refreshing
 * every 30 s would reach it in 10 minutes (issue 45, finding 7). It shows the age last read for that queue
 * (`known`, kept by the caller) instead; a view the user asked for reads and updates it.
 */
export async function withOldest(
  redrive: RedriveService,
  queues: readonly DeadLetterQueueInfo[],
  logger: Logger,
  refresh = false,
  known: Map<string, string | undefined> = new Map(),
): Promise<OverviewQueue[]> {
  const limit = redrive.transport === 'rabbitmq' ? 1 : 20;
  const readNothing = refresh && redrive.transport === 'rabbitmq';
  return Promise.all(
    queues.map(async (queue) => {
      if (!queue.exists || queue.depth === 0) {
        known.delete(queue.name);
        return queue;
      }
      if (readNothing) return { ...queue, oldestParkedAt: known.get(queue.name) };
      try {
        const letters = await redrive.inspect(queue.name, limit);
        const times = letters
          .map((l) => l.message.lastFailureAt ?? l.firstFailureAt)
          .filter((t): t is string => t !== null && !Number.isNaN(Date.parse(t)))
          .sort((a, b) => Date.parse(a) - Date.parse(b));
        if (known.size < MAX_KNOWN || known.has(queue.name)) known.set(queue.name, times[0]);
        return { ...queue, oldestParkedAt: times[0] };
      } catch (error) {
        logger.warn(`The oldest message of ${queue.name} could not be read: ${String(error)}`);
        return queue;
      }
    }),
  );
}
