import { ConflictException, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { newMessageId, Outbox, OutboxService } from 'nest-reliable-messaging';
import { PostCreated } from '@app/contracts';
import { CreatePostDto } from './dto/create-post.dto';
import { UpdatePostDto } from './dto/update-post.dto';
import { Post } from './post.entity';

@Injectable()
export class PostsService {
  private readonly logger = new Logger(PostsService.name);

  constructor(
    @InjectRepository(Post) private readonly posts: Repository<Post>,
    private readonly outbox: OutboxService,
  ) {}

  /**
   * Saves the post and records its `PostCreated` event in one transaction: both commit or neither does.
   * The relay publishes the event after the commit, also if the broker is down now (then once it is back).
   * With `publishAt` the event is scheduled: published at that time, not before (at once when it is past).
   */
  @Outbox()
  async create(input: CreatePostDto): Promise<Post> {
    const eventId = newMessageId();
    const publishAt = input.publishAt === undefined ? null : new Date(input.publishAt);
    const post = await this.posts.save(
      this.posts.create({
        authorId: input.authorId,
        title: input.title,
        content: input.content,
        publishAt,
        eventId,
      }),
    );
    await this.outbox.add(
      PostCreated,
      { eventId, postId: post.id, authorId: post.authorId, title: post.title },
      { messageId: eventId, ...(publishAt ? { deliverAt: publishAt } : {}) },
    );
    return post;
  }

  findOne(id: number): Promise<Post | null> {
    return this.posts.findOneBy({ id });
  }

  /**
   * Edits the post; `null` when there is none. While its `PostCreated` is still scheduled, the edit replaces
   * it in the same transaction: the scheduled one is cancelled and a new one (a new event id, the new title,
   * the new `publishAt`) scheduled, so the followers are told once, of the post as it is then. An announcement
   * already due or published stays as it was; a new `publishAt` for it is a conflict (409).
   */
  @Outbox()
  async update(id: number, input: UpdatePostDto): Promise<Post | null> {
    const post = await this.posts.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
    if (!post) return null;
    post.title = input.title ?? post.title;
    post.content = input.content ?? post.content;
    const publishAt = input.publishAt === undefined ? post.publishAt : new Date(input.publishAt);
    const rescheduled = post.publishAt && post.eventId && (await this.outbox.cancel(post.eventId)).cancelled;
    if (rescheduled) {
      post.eventId = newMessageId();
      await this.outbox.add(
        PostCreated,
        { eventId: post.eventId, postId: post.id, authorId: post.authorId, title: post.title },
        { messageId: post.eventId, ...(publishAt ? { deliverAt: publishAt } : {}) },
      );
    } else if (publishAt?.getTime() !== post.publishAt?.getTime()) {
      throw new ConflictException(`Post ${id} was announced already: its publishAt cannot change.`);
    }
    post.publishAt = publishAt;
    return this.posts.save(post);
  }

  /**
   * Deletes the post; `false` when there is none. A post whose `PostCreated` is still scheduled takes it
   * along: the cancel commits with the delete, so its followers are never told. An event already due or
   * published is not taken back (the notifications stay).
   */
  @Outbox()
  async remove(id: number): Promise<boolean> {
    const post = await this.posts.findOneBy({ id });
    if (!post) return false;
    const deleted = await this.posts.delete({ id });
    if (!deleted.affected) return false; // deleted meanwhile by another request
    if (post.publishAt && post.eventId) {
      const result = await this.outbox.cancel(post.eventId);
      this.logger.log(
        result.cancelled
          ? `Post ${id} deleted before ${post.publishAt.toISOString()}: its announcement is cancelled.`
          : `Post ${id} deleted; its announcement was not cancelled (${result.reason}).`,
      );
    }
    return true;
  }
}
