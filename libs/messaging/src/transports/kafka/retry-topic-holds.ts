import { KafkaMessage } from 'kafkajs';
import { Clock } from '../../common/clock';
import { MessageHeaders } from '../../envelope/message-headers';

/**
 * How long a retry-topic record is not due yet, per partition: until its `msg.retry-due-at`, but never
 * longer than its topic's tier from when the subscriber first held it, so that a due time far in the future
 * (a mistake, or a foreign producer) cannot stop the partition.
 */
export class RetryTopicHolds {
  /** The record each partition is held for (`topic:partition`), and until when at the latest. */
  private readonly held = new Map<string, { offset: string; until: number }>();

  constructor(private readonly clock: Clock) {}

  /** Milliseconds the record is still not due; 0 when it is due (or carries no valid due time). */
  notDueFor(topic: string, partition: number, message: KafkaMessage, tierMs: number): number {
    const slot = `${topic}:${partition}`;
    const now = this.clock.now();
    let held = this.held.get(slot);
    if (!held || held.offset !== message.offset) {
      held = { offset: message.offset, until: now + tierMs };
      this.held.set(slot, held);
    }
    const wait = Math.min(retryDueAt(message), held.until) - now;
    if (wait > 0) return wait;
    this.held.delete(slot);
    return 0;
  }
}

/** When a retry-topic record is due (epoch ms), or NaN without a valid `msg.retry-due-at`. */
function retryDueAt(message: KafkaMessage): number {
  const dueAt = message.headers?.[MessageHeaders.RETRY_DUE_AT];
  return dueAt ? Date.parse(String(dueAt)) : Number.NaN;
}
