/** A new outbox row. */
export interface NewOutboxRow {
  readonly messageId: string;
  readonly destination: string;
  readonly type: string;
  readonly key: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The payload as JSON text. */
  readonly payloadJson: string;
  readonly occurredAt: Date;
}

/** A row the relay claimed. */
export interface ClaimedOutboxRow extends NewOutboxRow {
  /** bigint, as text. */
  readonly id: string;
  /** Failed publish attempts so far. */
  readonly attempts: number;
  readonly createdAt: Date;
}

/** A row whose publish failed, and when to try it again. */
export interface FailedOutboxRow {
  readonly id: string;
  /** A short reason, without payload data. */
  readonly error: string;
  readonly retryInMs: number;
}
