/** Where a planned message sits in its dead-letter destination. */
export type MessagePosition =
  /** RabbitMQ: 0 is the queue's head. */
  | { readonly kind: 'queue'; readonly index: number }
  /** Kafka: the record's partition and offset in the dead-letter topic. */
  | { readonly kind: 'partition'; readonly partition: number; readonly offset: string };

/** One message a plan would move, described from its reserved headers only (never its payload). */
export interface PlannedMessage {
  /** Where it sits in the dead-letter destination. */
  readonly position: MessagePosition;
  /** `msg.id`, kept by the redrive (null when the message had none: it failed decoding). */
  readonly messageId: string | null;
  /** `msg.type`, the event type (null when absent). */
  readonly type: string | null;
  /** `msg.failure-category`, e.g. `TRANSIENT` (null when absent). */
  readonly failureCategory: string | null;
  /** `msg.failure-code`, e.g. `SCHEMA_MISMATCH` (null when absent). */
  readonly failureCode: string | null;
  /** `msg.retry-attempt`: deliveries that failed before the message was parked. */
  readonly attempts: number | null;
  /** `msg.origin-destination`: the topic or exchange it came from (null when absent). */
  readonly originDestination: string | null;
  /** `msg.last-failure-at`: when its last delivery failed, ISO 8601 (null when absent). */
  readonly lastFailureAt: string | null;
  /** Redrives this message went through before (`msg.redrive-count`): above 0, a redrive loop to look at. */
  readonly redriveCount: number;
  /** Ids of those redrives, oldest first (`msg.redrive-history` and `msg.redrive-id`), at most ten. */
  readonly previousRedriveIds: readonly string[];
  /** SHA-256 of key, headers and body: execute moves the message only if it is still this one. */
  readonly fingerprint: string;
}
