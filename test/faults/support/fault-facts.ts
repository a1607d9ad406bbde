import { PostgresCluster } from '../../harness/postgres-cluster';

/** A row of post-service's `posts`. */
export interface PostRow {
  readonly id: number;
  readonly authorId: number;
  readonly title: string;
}

/** A row of post-service's outbox. */
export interface OutboxRow {
  readonly messageId: string;
  readonly postId: number;
  readonly pending: boolean;
}

/** A row of subscribe-service's `notifications`. */
export interface NotificationRow {
  readonly id: number;
  readonly subscriberId: number;
  readonly postId: number;
  readonly authorId: number;
  readonly title: string;
  readonly eventId: string;
}

/** What the two databases hold after a run. */
export interface DatabaseFacts {
  readonly posts: PostRow[];
  readonly outbox: OutboxRow[];
  readonly notifications: NotificationRow[];
  /** Message ids subscribe-service's inbox recorded for its group. */
  readonly inbox: string[];
}

/** The databases of a fault run (both on its private cluster). */
export const POST_DATABASE = 'post_service';
export const SUBSCRIBE_DATABASE = 'subscribe_service';

/** Reads everything the checks need from both databases. */
export async function readDatabaseFacts(postgres: PostgresCluster, group: string): Promise<DatabaseFacts> {
  const [posts, outbox, notifications, inbox] = await Promise.all([
    postgres.query<{ id: number; author_id: number; title: string }>(
      'select id, author_id, title from posts order by id',
      [],
      POST_DATABASE,
    ),
    postgres.query<{ message_id: string; post_id: number; pending: boolean }>(
      `select message_id, (payload->>'postId')::int as post_id, sent_at is null as pending
       from messaging_outbox order by id`,
      [],
      POST_DATABASE,
    ),
    postgres.query<{
      id: number;
      subscriber_id: number;
      post_id: number;
      author_id: number;
      title: string;
      event_id: string;
    }>(
      'select id, subscriber_id, post_id, author_id, title, event_id from notifications order by id',
      [],
      SUBSCRIBE_DATABASE,
    ),
    postgres.query<{ message_id: string }>(
      'select message_id from messaging_inbox where consumer_group = $1',
      [group],
      SUBSCRIBE_DATABASE,
    ),
  ]);
  return {
    posts: posts.map((r) => ({ id: r.id, authorId: r.author_id, title: r.title })),
    outbox: outbox.map((r) => ({ messageId: r.message_id, postId: r.post_id, pending: r.pending })),
    notifications: notifications.map((r) => ({
      id: r.id,
      subscriberId: r.subscriber_id,
      postId: r.post_id,
      authorId: r.author_id,
      title: r.title,
      eventId: r.event_id,
    })),
    inbox: inbox.map((r) => r.message_id),
  };
}

/** Outbox rows not yet published (quiescence waits for 0). */
export async function pendingOutboxRows(postgres: PostgresCluster): Promise<number> {
  const [row] = await postgres.query<{ n: number }>(
    'select count(*)::int as n from messaging_outbox where sent_at is null',
    [],
    POST_DATABASE,
  );
  return row.n;
}

/** Notifications stored so far, and of these posts. */
export async function notificationCount(
  postgres: PostgresCluster,
  postIds?: readonly number[],
): Promise<number> {
  const [row] = postIds
    ? await postgres.query<{ n: number }>(
        'select count(*)::int as n from notifications where post_id = any($1::int[])',
        [postIds],
        SUBSCRIBE_DATABASE,
      )
    : await postgres.query<{ n: number }>(
        'select count(*)::int as n from notifications',
        [],
        SUBSCRIBE_DATABASE,
      );
  return row.n;
}
