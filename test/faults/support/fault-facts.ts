import {
  decodeLogicalMessage,
  decodePgoutput,
  logicalNames,
  readReplicationSlot,
} from 'nest-reliable-messaging/testing';
import { PrivateDatabaseServer } from '../../harness/private-database-server';
import { AUDIT_SLOT, RunRelay } from './fault-stack';

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
  relay: RunRelay = 'poll',
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
  const outboxRows = outbox.map((r) => ({
    messageId: r.message_id,
    postId: Number(r.post_id),
    pending: Boolean(r.pending),
  }));
  return {
    posts: posts.map((r) => ({ id: r.id, authorId: r.author_id, title: r.title })),
    // Logical relay: the messages are in the log (the audit slot keeps them all); rows only when parked.
    outbox: relay === 'logical' ? await loggedMessages(server) : outboxRows,
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

/** Outbox rows not yet published, and with the logical relay messages its slot has not confirmed (quiescence waits for 0). */
export async function pendingOutboxRows(
  server: PrivateDatabaseServer,
  relay: RunRelay = 'poll',
): Promise<number> {
  const [row] = await server.query<{ n: number | string }>(
    'select count(*) as n from messaging_outbox where sent_at is null',
    [],
    POST_DATABASE,
  );
  if (relay === 'poll') return Number(row.n);
  const unconfirmed = (await loggedMessages(server)).filter((m) => m.pending).length;
  return Number(row.n) + unconfirmed;
}

/**
 * Every message post-service committed into the log, read (without consuming) from the audit slot made beside
 * the relay's; pending while its transaction ends after the relay's slot's confirmed position.
 */
async function loggedMessages(server: PrivateDatabaseServer): Promise<OutboxRow[]> {
  const names = logicalNames(undefined);
  const sql = <R extends object>(text: string, params?: unknown[]) =>
    server.query<R>(text, params, POST_DATABASE);
  const relaySlot = await readReplicationSlot(sql, names);
  const changes = await sql<{ xid: string; data: Buffer }>(
    `select xid::text as xid, data from pg_logical_slot_peek_binary_changes($1, null, null,
       'proto_version', '1', 'publication_names', $2, 'messages', 'true')`,
    [AUDIT_SLOT, names.publication],
  );
  const ends = new Map<string, bigint>();
  const messages: Array<{ xid: string; messageId: string; postId: number }> = [];
  let xid = '';
  for (const change of changes) {
    const message = decodePgoutput(change.data);
    if (message.tag === 'begin') xid = change.xid;
    if (message.tag === 'commit') ends.set(xid, message.endLsn);
    if (message.tag !== 'message' || message.prefix !== names.prefix) continue;
    const decoded = decodeLogicalMessage(message.content);
    if (!decoded.ok)
      throw new Error(`A message in the log that OutboxService did not write: ${decoded.reason}`);
    const payload = JSON.parse(decoded.row.payloadJson) as { postId: number };
    messages.push({ xid, messageId: decoded.row.messageId, postId: Number(payload.postId) });
  }
  const confirmed = relaySlot?.confirmedLsn ?? 0n;
  return messages.map((m) => ({
    messageId: m.messageId,
    postId: m.postId,
    pending: (ends.get(m.xid) ?? 2n ** 64n) > confirmed,
  }));
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
