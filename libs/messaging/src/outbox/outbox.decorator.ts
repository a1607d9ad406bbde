import { SetMetadata } from '@nestjs/common';
import { OUTBOX_METADATA } from '../messaging.constants';
import { RunInTransactionOptions } from '../transaction/transaction-host';

/** Options of `@Outbox()`. */
export type OutboxOptions = RunInTransactionOptions;

/**
 * Runs the decorated method in one database transaction (joining the caller's, if any), so that the
 * business rows it writes and the messages it records with `OutboxService.add()` commit or roll back
 * together. After the commit the local relay is woken at once.
 *
 * ```ts
 * @Outbox()
 * async create(dto: CreatePostDto) {
 *   const post = await this.posts.save(this.posts.create(dto));
 *   await this.outbox.add(PostCreated, { postId: post.id, authorId: post.authorId, title: post.title });
 *   return post;
 * }
 * ```
 *
 * The method must belong to a singleton provider (the default scope); it is wrapped at startup.
 */
export function Outbox(options: OutboxOptions = {}): MethodDecorator {
  return SetMetadata(OUTBOX_METADATA, options);
}
