import 'reflect-metadata';
import { z } from 'zod';
import { defineEvent, EventPayload } from '../envelope/event-definition';
import { IDEMPOTENT_HANDLER_METADATA, OUTBOX_METADATA, RETRY_POLICY_METADATA } from '../messaging.constants';
import { RetryPolicy } from '../retry/retry-policy.decorator';
import { RetryMode } from '../retry/retry-policy.interface';
import { IdempotentHandler, IdempotentHandlerMetadata } from './idempotent-handler.decorator';
import { MessageContext } from './message-context';

const PostCreated = defineEvent({
  type: 'PostCreated',
  destination: 'post-create',
  schema: z.object({ postId: z.number().int(), authorId: z.number().int(), title: z.string() }),
  key: (event) => event.authorId,
});

const PostDeleted = defineEvent({
  type: 'PostDeleted',
  destination: 'post-delete',
  schema: z.object({ postId: z.number().int() }),
  key: (event) => event.postId,
});

describe(IdempotentHandler.name, () => {
  describe('decoration', () => {
    it('records the event and the group under IDEMPOTENT_HANDLER_METADATA on the method', () => {
      class Subscribers {
        @IdempotentHandler(PostCreated, { group: 'subscribe-service' })
        async onPostCreated(
          _event: EventPayload<typeof PostCreated>,
          _context: MessageContext,
        ): Promise<void> {}
      }
      const metadata = Reflect.getMetadata(
        IDEMPOTENT_HANDLER_METADATA,
        Subscribers.prototype.onPostCreated,
      ) as IdempotentHandlerMetadata;
      expect(metadata).toEqual({ group: 'subscribe-service', event: PostCreated });
      expect(metadata.event).toBe(PostCreated);
    });

    it('accepts a handler that takes only the payload', () => {
      class Subscribers {
        @IdempotentHandler(PostDeleted, { group: 'g' })
        onPostDeleted(event: EventPayload<typeof PostDeleted>): number {
          return event.postId;
        }
      }
      expect(Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, Subscribers.prototype.onPostDeleted)).toEqual({
        group: 'g',
        event: PostDeleted,
      });
    });

    it('attaches nothing else and leaves the method as it was', () => {
      const method = jest.fn(async () => undefined);
      const target = {};
      const descriptor = { value: method, writable: true, enumerable: false, configurable: true };

      const result: unknown = IdempotentHandler(PostCreated, { group: 'g' })(
        target,
        'onPostCreated',
        descriptor,
      );

      expect(result).toBeUndefined();
      expect(descriptor.value).toBe(method);
      expect(method).not.toHaveBeenCalled();
      expect(Reflect.getOwnMetadataKeys(method)).toEqual([IDEMPOTENT_HANDLER_METADATA]);
      expect(Reflect.getOwnMetadataKeys(target)).toEqual([]);
      expect(Reflect.getOwnMetadataKeys(target, 'onPostCreated')).toEqual([]);
      expect(Reflect.getMetadata(RETRY_POLICY_METADATA, method)).toBeUndefined();
      expect(Reflect.getMetadata(OUTBOX_METADATA, method)).toBeUndefined();
    });

    it('does not keep a reference to the options object it was given', () => {
      const options = { group: 'before' };
      class Subscribers {
        @IdempotentHandler(PostCreated, options)
        async onPostCreated(): Promise<void> {}
      }
      options.group = 'after';
      expect(
        Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, Subscribers.prototype.onPostCreated),
      ).toMatchObject({
        group: 'before',
      });
    });

    it('keeps two handlers of one class apart', () => {
      class Subscribers {
        @IdempotentHandler(PostCreated, { group: 'a' })
        async onPostCreated(): Promise<void> {}

        @IdempotentHandler(PostDeleted, { group: 'b' })
        async onPostDeleted(): Promise<void> {}
      }
      expect(Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, Subscribers.prototype.onPostCreated)).toEqual({
        group: 'a',
        event: PostCreated,
      });
      expect(Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, Subscribers.prototype.onPostDeleted)).toEqual({
        group: 'b',
        event: PostDeleted,
      });
    });

    it('combines with @RetryPolicy() on the same method', () => {
      class Subscribers {
        @IdempotentHandler(PostCreated, { group: 'g' })
        @RetryPolicy({ maxAttempts: 3, mode: RetryMode.INLINE })
        async onPostCreated(): Promise<void> {}
      }
      const method = Subscribers.prototype.onPostCreated;
      expect(Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, method)).toEqual({
        group: 'g',
        event: PostCreated,
      });
      expect(Reflect.getMetadata(RETRY_POLICY_METADATA, method)).toEqual({
        maxAttempts: 3,
        mode: RetryMode.INLINE,
      });
    });

    // claim: C-22
    it('rejects at compile time a handler whose payload type does not fit the event', () => {
      class Subscribers {
        // @ts-expect-error the handler takes a PostDeleted-shaped payload, the event is PostCreated
        @IdempotentHandler(PostCreated, { group: 'g' })
        async onPostCreated(_event: { deletedAt: string }): Promise<void> {}
      }
      expect(
        Reflect.getMetadata(IDEMPOTENT_HANDLER_METADATA, Subscribers.prototype.onPostCreated),
      ).toMatchObject({
        event: PostCreated,
      });
    });
  });
});
