/** One notification to deliver: a subscriber learns that an author they follow wrote a post. */
export interface NewNotification {
  readonly subscriberId: number;
  readonly postId: number;
  readonly authorId: number;
  readonly title: string;
  readonly eventId: string;
  readonly occurredAt: Date;
}

/**
 * Tells subscribers about new posts. Called inside the consumer's transaction: whatever it writes to the
 * database commits with the inbox record, so a redelivered event never notifies twice. An implementation
 * that calls an outside system (mail, push) should record the notification here and send it from an outbox
 * of its own, for the same reason.
 *
 * An abstract class, so that it is both the interface and the injection token.
 */
export abstract class Notifier {
  /** Delivers the notifications; resolves with how many were new (a repeat is skipped, never an error). */
  abstract notify(notifications: readonly NewNotification[]): Promise<number>;
}
