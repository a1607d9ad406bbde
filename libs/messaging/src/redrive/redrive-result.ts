import { MessagePosition } from './redrive-plan';

/** A dead-letter destination and how many messages wait in it. */
export interface DeadLetterQueueInfo {
  /** The dead-letter destination's name (Kafka topic or RabbitMQ queue). */
  readonly name: string;
  /** False when a named RabbitMQ queue does not exist. */
  readonly exists: boolean;
  /** Messages waiting (RabbitMQ: ready; Kafka: not yet redriven by `<dlq>.redrive`). */
  readonly depth: number;
  /** RabbitMQ: consumers attached (a DLQ normally has none). */
  readonly consumers?: number;
}

/**
 * What became of one planned message:
 * - REDRIVEN: the target confirmed the copy and the DLQ message was settled;
 * - NOT_CONFIRMED: the target did not confirm (REJECTED or AMBIGUOUS): it stays in the DLQ;
 * - NOT_ATTEMPTED: an earlier message of its Kafka partition was not confirmed: it stays, in order;
 * - NOT_SETTLED: confirmed, but settling in the DLQ failed: it stays and a later redrive repeats it (the
 *   inbox absorbs the duplicate).
 */
export type RedriveStatus = 'REDRIVEN' | 'NOT_CONFIRMED' | 'NOT_ATTEMPTED' | 'NOT_SETTLED';

/** One message's outcome. */
export interface MessageRedriveOutcome {
  /** Where it was in the source, as planned. */
  readonly position: MessagePosition;
  /** Its `msg.id` (null when it has none). */
  readonly messageId: string | null;
  /** What became of it. */
  readonly status: RedriveStatus;
  /** Why it was not redriven (the broker's answer). */
  readonly error?: string;
}

/** The outcome of `execute()`. */
export interface RedriveResult {
  /** The id written to every copy's `msg.redrive-id`. */
  readonly redriveId: string;
  /** The dead-letter destination read (the plan's `source`). */
  readonly source: string;
  /** Where the messages were published (the plan's `target`). */
  readonly target: string;
  /**
   * `discard` when the plan archived its messages in `target` (`redriven` then counts the archived ones);
   * `edit` when it published an edited copy to `target` and archived the original (`redriven`: 1 or 0).
   */
  readonly action?: 'discard' | 'edit';
  /** Messages moved (confirmed by the target, settled in the source). */
  readonly redriven: number;
  /** Planned messages still in the source. */
  readonly leftInSource: number;
  /** Each planned message's outcome, in the plan's order. */
  readonly messages: readonly MessageRedriveOutcome[];
}
