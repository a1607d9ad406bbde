import { Logger } from '@nestjs/common';
import { RedriveService } from '../redrive/redrive.service';
import { DeadLetterQueueInfo } from '../redrive/redrive-result';
import { OverviewQueue } from './views/overview-views';

/**
 * Since when each non-empty DLQ's oldest message waits: the earliest last failure among the first messages
 * (RabbitMQ: the head, which is the oldest; Kafka: the first of each partition, up to 20). A DLQ that cannot
 * be read keeps its depth, without an age (the DLQ's page says why).
 */
export async function withOldest(
  redrive: RedriveService,
  queues: readonly DeadLetterQueueInfo[],
  logger: Logger,
): Promise<OverviewQueue[]> {
  const limit = redrive.transport === 'rabbitmq' ? 1 : 20;
  return Promise.all(
    queues.map(async (queue) => {
      if (!queue.exists || queue.depth === 0) return queue;
      try {
        const letters = await redrive.inspect(queue.name, limit);
        const times = letters
          .map((l) => l.message.lastFailureAt ?? l.firstFailureAt)
          .filter((t): t is string => t !== null && !Number.isNaN(Date.parse(t)))
          .sort((a, b) => Date.parse(a) - Date.parse(b));
        return { ...queue, oldestParkedAt: times[0] };
      } catch (error) {
        logger.warn(`The oldest message of ${queue.name} could not be read: ${String(error)}`);
        return queue;
      }
    }),
  );
}
