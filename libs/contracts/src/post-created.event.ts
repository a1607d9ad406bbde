import { z } from 'zod';
import { defineEvent, EventPayload } from 'nest-reliable-messaging';

/**
 * A post was written. post-service records it in its outbox in the transaction that saves the post;
 * subscribe-service turns it into one notification per subscriber of the author.
 *
 * `eventId` is also the message id, so a redelivered copy carries the same id in its headers and its body.
 * Keyed by author: one author's posts are published and handled in the order they were written.
 */
export const PostCreated = defineEvent({
  type: 'PostCreated',
  destination: 'post-create',
  schema: z.object({
    eventId: z.uuid(),
    postId: z.number().int().positive(),
    authorId: z.number().int().positive(),
    title: z.string().min(1).max(200),
  }),
  key: (event) => event.authorId,
});

/** The payload of a `PostCreated` event. */
export type PostCreatedEvent = EventPayload<typeof PostCreated>;
