import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** A subscriber follows an author (table `subscriptions`): at most once per pair. */
@Entity({ name: 'subscriptions' })
@Unique('subscriptions_subscriber_author_key', ['subscriberId', 'authorId'])
export class Subscription {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'subscriber_id', type: 'integer' })
  subscriberId!: number;

  @Index('subscriptions_author_id_idx')
  @Column({ name: 'author_id', type: 'integer' })
  authorId!: number;

  @CreateDateColumn({ name: 'created_at' })
  createdAt!: Date;
}
