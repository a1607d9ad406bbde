import { Clock } from '../../common/clock';

/** How long a topic just created may stay unknown to a broker of the cluster. */
export const TOPIC_PROPAGATION_MS = 30_000;
const RETRY_EVERY_MS = 200;

/**
 * Runs `work` (an admin request about topics created a moment ago) until no broker answers that it does
 * not know them: on a cluster, a topic exists for the controller before every broker has the metadata, and
 * kafkajs sends a request like `describeConfigs` to any broker. Other failures, and this one after
 * `TOPIC_PROPAGATION_MS`, are thrown.
 */
export async function onceTopicsPropagated<T>(clock: Clock, work: () => Promise<T>): Promise<T> {
  const deadline = clock.now() + TOPIC_PROPAGATION_MS;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (!isUnknownTopic(error) || clock.now() >= deadline) throw error;
    }
    await clock.sleep(RETRY_EVERY_MS);
  }
}

/** A broker's answer that it does not host (or know) the topic-partition. */
export function isUnknownTopic(error: unknown): boolean {
  return (error as { type?: unknown } | null)?.type === 'UNKNOWN_TOPIC_OR_PARTITION';
}
