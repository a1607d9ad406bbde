import { DatabaseFacts, NotificationRow } from './fault-facts';
import { PostRequest } from './post-load';
import { WireCopy } from './wire-witness';

/** Who follows whom in a fault run. */
export interface RunAudience {
  readonly authorIds: readonly number[];
  /** Author → its subscribers. */
  readonly subscribersOf: ReadonlyMap<number, readonly number[]>;
}

/** The checks of a fault run, each a list of what broke it (empty when it holds). */
export interface FaultVerdict {
  readonly requests: number;
  readonly created: number;
  /** Requests answered with an error status (4xx, 5xx), by status. */
  readonly refused: Readonly<Record<string, number>>;
  /** Requests without an answer (connection cut or refused, timeout). */
  readonly unanswered: number;
  /** Of those, the ones whose post committed anyway (held to the same checks as a 201). */
  readonly committedWithoutAnswer: number;
  /** Posts in the database (201 and committed without an answer). */
  readonly committedPosts: number;
  readonly expectedNotifications: number;
  readonly deliveredNotifications: number;
  /** Every 201 has its post row (id and title as answered). */
  readonly createdButMissing: string[];
  /** A refused request, or an unanswered one that did not commit, left a post or a notification. */
  readonly leftBehind: string[];
  /** Post rows no request of the run explains. */
  readonly unexplainedPosts: string[];
  /** Committed posts without exactly one outbox row, and rows still pending. */
  readonly outboxProblems: string[];
  /** Committed post × subscriber of its author without a notification. */
  readonly lost: string[];
  /** Notifications of one (subscriber, post) more than once. */
  readonly duplicatedNotifications: string[];
  /** Notifications of no committed post, of a non-subscriber, or with the wrong event id or title. */
  readonly orphanNotifications: string[];
  /** Committed posts whose event never appeared on the wire. */
  readonly unpublished: string[];
  /** Copies on the wire (every publish, duplicates included), distinct message ids, and ids of no outbox row. */
  readonly wire: { copies: number; distinct: number; duplicates: number; unknown: string[] };
  /** Inbox records of the group, and records of no outbox row. */
  readonly inbox: { records: number; unknown: string[] };
  /** Per author, 201 posts first published out of post order. */
  readonly wireOrderViolations: string[];
  /** Per author and subscriber, 201 posts notified out of post order. */
  readonly notificationOrderViolations: string[];
}

/**
 * Compares what the load was answered with what the databases and the wire hold. "Post order" is the order of
 * an author's 201 requests: an author sends a post only after the previous one was answered, so each of them
 * committed before the next was sent. Posts committed without an answer are checked for exactly-once delivery
 * but not for order (their commit may have come after the author's next post).
 */
export function judgeFaultRun(
  requests: readonly PostRequest[],
  audience: RunAudience,
  facts: DatabaseFacts,
  wire: readonly WireCopy[],
  options: {
    /**
     * Server errors (5xx) count as unanswered: in chaos mode a COMMIT's answer can be lost after the
     * database committed, and post-service cannot know. Default false.
     */
    readonly serverErrorsAmbiguous?: boolean;
  } = {},
): FaultVerdict {
  const postsByTitle = new Map(facts.posts.map((p) => [p.title, p]));
  const requestByTitle = new Map(requests.map((r) => [r.title, r]));
  const created = requests.filter((r) => r.status === 201);
  const ambiguous = (r: PostRequest) =>
    r.status === 0 || r.status === undefined || (options.serverErrorsAmbiguous === true && r.status >= 500);
  const refusedRequests = requests.filter((r) => r.status !== 201 && !ambiguous(r));
  const unanswered = requests.filter(ambiguous);
  const notifiedTitles = new Set(facts.notifications.map((n) => n.title));

  const createdButMissing = created
    .filter(
      (r) => postsByTitle.get(r.title)?.id !== r.postId || postsByTitle.get(r.title)?.authorId !== r.authorId,
    )
    .map(
      (r) => `${r.title}: answered 201 with id ${r.postId}, row ${JSON.stringify(postsByTitle.get(r.title))}`,
    );
  const leftBehind = [
    ...refusedRequests.filter((r) => postsByTitle.has(r.title) || notifiedTitles.has(r.title)),
    ...unanswered.filter((r) => !postsByTitle.has(r.title) && notifiedTitles.has(r.title)),
  ].map((r) => `${r.title} (status ${r.status ?? 'none'})`);
  const unexplainedPosts = facts.posts
    .filter((p) => !requestByTitle.has(p.title))
    .map((p) => `post ${p.id} '${p.title}'`);

  const committed = facts.posts.filter((p) => requestByTitle.has(p.title));
  const committedIds = new Set(committed.map((p) => p.id));
  const outboxByPost = new Map<number, string[]>();
  for (const row of facts.outbox)
    outboxByPost.set(row.postId, [...(outboxByPost.get(row.postId) ?? []), row.messageId]);
  const eventOf = new Map(committed.map((p) => [p.id, outboxByPost.get(p.id)?.[0]]));
  const outboxProblems = [
    ...committed
      .filter((p) => (outboxByPost.get(p.id) ?? []).length !== 1)
      .map((p) => `post ${p.id}: ${(outboxByPost.get(p.id) ?? []).length} outbox rows`),
    ...facts.outbox
      .filter((o) => !committedIds.has(o.postId))
      .map((o) => `outbox row of unknown post ${o.postId}`),
    ...facts.outbox.filter((o) => o.pending).map((o) => `outbox row of post ${o.postId} still pending`),
  ];

  const notificationsOf = new Map<string, NotificationRow[]>();
  for (const n of facts.notifications) {
    const pair = `${n.subscriberId}/${n.postId}`;
    notificationsOf.set(pair, [...(notificationsOf.get(pair) ?? []), n]);
  }
  const lost: string[] = [];
  let expectedNotifications = 0;
  for (const post of committed) {
    for (const subscriberId of audience.subscribersOf.get(post.authorId) ?? []) {
      expectedNotifications += 1;
      if (!notificationsOf.has(`${subscriberId}/${post.id}`))
        lost.push(`post ${post.id} → subscriber ${subscriberId}`);
    }
  }
  const duplicatedNotifications = [...notificationsOf]
    .filter(([, list]) => list.length > 1)
    .map(([pair, list]) => `${pair} × ${list.length}`);
  const postById = new Map(committed.map((p) => [p.id, p]));
  const orphanNotifications = facts.notifications
    .filter((n) => {
      const post = postById.get(n.postId);
      return (
        !post ||
        post.title !== n.title ||
        post.authorId !== n.authorId ||
        eventOf.get(post.id) !== n.eventId ||
        !(audience.subscribersOf.get(post.authorId) ?? []).includes(n.subscriberId)
      );
    })
    .map((n) => `notification ${n.id} (subscriber ${n.subscriberId}, post ${n.postId}, '${n.title}')`);

  const outboxIds = new Set(facts.outbox.map((o) => o.messageId));
  const firstSeen = new Map<string, number>();
  wire.forEach((copy, i) => {
    if (!firstSeen.has(copy.messageId)) firstSeen.set(copy.messageId, i);
  });
  const unpublished = committed
    .filter((p) => !firstSeen.has(eventOf.get(p.id) ?? ''))
    .map((p) => `post ${p.id} (event ${eventOf.get(p.id)})`);

  const wireOrderViolations: string[] = [];
  const notificationOrderViolations: string[] = [];
  for (const authorId of audience.authorIds) {
    const inOrder = created.filter((r) => r.authorId === authorId).sort((a, b) => a.index - b.index);
    const positions = inOrder.map((r) => firstSeen.get(eventOf.get(r.postId ?? -1) ?? '') ?? -1);
    wireOrderViolations.push(...outOfOrder(inOrder, positions, `author ${authorId} on the wire`));
    for (const subscriberId of audience.subscribersOf.get(authorId) ?? []) {
      const ids = inOrder.map((r) => notificationsOf.get(`${subscriberId}/${r.postId}`)?.[0]?.id ?? -1);
      notificationOrderViolations.push(
        ...outOfOrder(inOrder, ids, `author ${authorId}, subscriber ${subscriberId}`),
      );
    }
  }

  const refused: Record<string, number> = {};
  for (const r of refusedRequests) refused[String(r.status)] = (refused[String(r.status)] ?? 0) + 1;
  return {
    requests: requests.length,
    created: created.length,
    refused,
    unanswered: unanswered.length,
    committedWithoutAnswer: unanswered.filter((r) => postsByTitle.has(r.title)).length,
    committedPosts: committed.length,
    expectedNotifications,
    deliveredNotifications: expectedNotifications - lost.length,
    createdButMissing,
    leftBehind,
    unexplainedPosts,
    outboxProblems,
    lost,
    duplicatedNotifications,
    orphanNotifications,
    unpublished,
    wire: {
      copies: wire.length,
      distinct: firstSeen.size,
      duplicates: wire.length - firstSeen.size,
      unknown: [...firstSeen.keys()].filter((id) => !outboxIds.has(id)),
    },
    inbox: { records: facts.inbox.length, unknown: facts.inbox.filter((id) => !outboxIds.has(id)) },
    wireOrderViolations,
    notificationOrderViolations,
  };
}

/** Pairs of consecutive posts whose positions (present ones, ≥ 0) go backwards. */
function outOfOrder(posts: readonly PostRequest[], positions: readonly number[], where: string): string[] {
  const violations: string[] = [];
  let previous = -1;
  let previousPost: PostRequest | undefined;
  posts.forEach((post, i) => {
    const position = positions[i];
    if (position < 0) return; // missing: reported as lost or unpublished
    if (position < previous && previousPost) {
      violations.push(
        `${where}: post ${post.postId} (#${post.index}) before post ${previousPost.postId} (#${previousPost.index})`,
      );
    }
    if (position > previous) {
      previous = position;
      previousPost = post;
    }
  });
  return violations;
}
