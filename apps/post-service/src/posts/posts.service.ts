import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { newMessageId, Outbox, OutboxService } from 'nest-reliable-messaging';
import { PostCreated } from '@app/contracts';
import { CreatePostDto } from './dto/create-post.dto';
import { Post } from './post.entity';

@Injectable()
export class PostsService {
  constructor(
    @InjectRepository(Post) private readonly posts: Repository<Post>,
    private readonly outbox: OutboxService,
  ) {}

  /**
   * Saves the post and records its `PostCreated` event in one transaction: both commit or neither does.
   * The relay publishes the event after the commit, also if the broker is down now (then once it is back).
   */
  @Outbox()
  async create(input: CreatePostDto): Promise<Post> {
    const post = await this.posts.save(
      this.posts.create({ authorId: input.authorId, title: input.title, content: input.content }),
    );
    const eventId = newMessageId();
    await this.outbox.add(
      PostCreated,
      { eventId, postId: post.id, authorId: post.authorId, title: post.title },
      { messageId: eventId },
    );
    return post;
  }

  findOne(id: number): Promise<Post | null> {
    return this.posts.findOneBy({ id });
  }
}
