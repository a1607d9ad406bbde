import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A blog post (table `posts`, created by `CreatePosts1764633600000`; `publish_at` and `event_id` added by
 * `AddPostPublishAt1765324800000`).
 */
@Entity({ name: 'posts' })
export class Post {
  @PrimaryGeneratedColumn()
  id!: number;

  @Index('posts_author_id_idx')
  @Column({ name: 'author_id', type: 'integer' })
  authorId!: number;

  @Column({ type: 'varchar', length: 200 })
  title!: string;

  @Column({ type: 'text' })
  content!: string;

  @CreateDateColumn({ name: 'created_at' })
  createdAt!: Date;

  /** When the author's followers are told; `null`: at once (announced when it was written). */
  @Column({ name: 'publish_at', type: Date, nullable: true })
  publishAt!: Date | null;

  /** The id of its `PostCreated` event (and message), which deleting the post cancels while scheduled. */
  @Column({ name: 'event_id', type: 'uuid', nullable: true })
  eventId!: string | null;
}
