import { PrivateDatabaseServer } from '../../harness/private-database-server';

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

/** The databases of a fault run (both on its private server). */
export const POST_DATABASE = 'post_service';
export const SUBSCRIBE_DATABASE = 'subscribe_service';

/** Reads everything the checks need from both databases. */
export async function readDatabaseFacts(
  server: PrivateDatabaseServer,
  group: string,
): Promise<DatabaseFacts> {
  const postId =
    server.dialect === 'postgres' ? "(payload->>'postId')::int" : "json_value(payload, '$.postId')";
  const [posts, outbox, notifications, inbox] = await Promise.all([
    server.query<{ id: number; author_id: number; title: string }>(
      'select id, author_id, title from posts order by id',
      [],
      POST_DATABASE,
    ),
    server.query<{ message_id: string; post_id: number | string; pending: boolean | number }>(
      `select message_id, ${postId} as post_id, sent_at is null as pending from messaging_outbox order by id`,
      [],
      POST_DATABASE,
    ),
    server.query<{
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
    server.query<{ message_id: string }>(
      'select message_id from messaging_inbox where consumer_group = $1',
      [group],
      SUBSCRIBE_DATABASE,
    ),
  ]);
  return {
    posts: posts.map((r) => ({ id: r.id, authorId: r.author_id, title: r.title })),
    outbox: outbox.map((r) => ({
      messageId: r.message_id,
      postId: Number(r.post_id),
      pending: Boolean(r.pending),
    })),
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
export async function pendingOutboxRows(server: PrivateDatabaseServer): Promise<number> {
  const [row] = await server.query<{ n: number | string }>(
    'select count(*) as n from messaging_outbox where sent_at is null',
    [],
    POST_DATABASE,
  );
  return Number(row.n);
}

/** Notifications stored so far, and of these posts. */
export async function notificationCount(
  server: PrivateDatabaseServer,
  postIds?: readonly number[],
): Promise<number> {
  if (postIds?.length === 0) return 0;
  const [row] = postIds
    ? await server.query<{ n: number | string }>(
        // Ids are integers from the database: inlined, the same SQL serves both dialects.
        `select count(*) as n from notifications where post_id in (${postIds.map((id) => Math.trunc(id)).join(', ')})`,
        [],
        SUBSCRIBE_DATABASE,
      )
    : await server.query<{ n: number | string }>(
        'select count(*) as n from notifications',
        [],
        SUBSCRIBE_DATABASE,
      );
  return Number(row.n);
}
