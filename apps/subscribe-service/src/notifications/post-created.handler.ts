import { Injectable } from '@nestjs/common';
import { IdempotentHandler, MessageContext, RetryMode, RetryPolicy } from 'nest-reliable-messaging';
import { PostCreated, PostCreatedEvent } from '@app/contracts';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { Notifier } from './notifier';

/** The consumer group of subscribe-service (a Kafka group id; on RabbitMQ the queue `post-create.subscribe-service`). */
export const SUBSCRIBE_SERVICE_GROUP = 'subscribe-service';

/** Turns each new post into one notification per subscriber of its author. */
@Injectable()
export class PostCreatedHandler {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly notifier: Notifier,
  ) {}

  /**
   * Runs once per event however often the broker delivers it: its writes commit with the inbox record.
   * A failure (the database away for a moment) is retried in place a few times; INLINE works on every
   * transport, and on Kafka it keeps the author's posts in order. What still fails is dead-lettered.
   */
  @IdempotentHandler(PostCreated, { group: SUBSCRIBE_SERVICE_GROUP })
  @RetryPolicy({
    maxAttempts: 5,
    mode: RetryMode.INLINE,
    backoff: { initialDelayMs: 500, maxDelayMs: 5_000 },
  })
  async onPostCreated(event: PostCreatedEvent, context: MessageContext): Promise<void> {
    const subscribers = await this.subscriptions.subscribersOf(event.authorId);
    await this.notifier.notify(
      subscribers.map((subscriberId) => ({
        subscriberId,
        postId: event.postId,
        authorId: event.authorId,
        title: event.title,
        eventId: event.eventId,
        occurredAt: context.occurredAt,
      })),
    );
  }
}
