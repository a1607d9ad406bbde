import { randomInt } from 'node:crypto';
import { BlogClient, NotificationView, PostView } from './blog-client';

/**
 * The steps of the blog post's tests, shared by `npm run demo` and the end-to-end tests: an author with
 * subscribers, bursts of posts, and the check that every subscriber got every notification exactly once.
 */

/** An author and the subscribers who follow them. */
export interface Audience {
  readonly authorId: number;
  readonly subscriberIds: readonly number[];
}

/** Creates an author with `subscribers` subscribers, with ids no earlier run used. */
export async function createAudience(client: BlogClient, subscribers: number): Promise<Audience> {
  const ids = new Set<number>();
  while (ids.size < subscribers + 1) ids.add(randomInt(1_000_000, 2_000_000_000));
  const [authorId, ...subscriberIds] = [...ids];
  for (const subscriberId of subscriberIds) {
    const result = await client.subscribe(subscriberId, authorId);
    if (result.status !== 201) {
      throw new Error(
        `Subscribing ${subscriberId} to ${authorId} answered ${result.status} ${result.error ?? ''}`,
      );
    }
  }
  return { authorId, subscriberIds };
}

/** One `POST /posts` of a burst. */
export interface PostResult {
  readonly status: number;
  readonly post?: PostView;
  readonly error?: string;
}

/** What a burst of posts got. */
export interface PostBurst {
  readonly results: readonly PostResult[];
  /** Ids of the posts that were created (201). */
  readonly postIds: number[];
  /** From the first request sent to the last one sent. */
  readonly sentWithinMs: number;
  /** From the first request sent to the last answer. */
  readonly answeredWithinMs: number;
}

/**
 * Sends `count` posts by `authorId` spread over `windowMs` (10 in 1 s: one every 100 ms), each without
 * waiting for the previous answer, as the blog post's JMeter plan did with 10 threads and a 1 s ramp-up.
 */
export async function sendPostsWithin(
  client: BlogClient,
  authorId: number,
  count: number,
  windowMs: number,
  label: string,
  onAnswer?: (answered: number) => void,
): Promise<PostBurst> {
  const started = Date.now();
  let answered = 0;
  let lastSent = started;
  const gapMs = count > 1 ? windowMs / count : 0;
  const results = await Promise.all(
    Array.from({ length: count }, async (_, i): Promise<PostResult> => {
      await sleep(Math.max(0, started + i * gapMs - Date.now()));
      lastSent = Math.max(lastSent, Date.now());
      const result = await client.createPost({
        authorId,
        title: `${label} #${i + 1}`,
        content: `Post ${i + 1} of ${count} in the ${label} scenario.`,
      });
      answered += 1;
      onAnswer?.(answered);
      return {
        status: result.status,
        post: result.status === 201 ? result.body : undefined,
        error: result.error,
      };
    }),
  );
  return {
    results,
    postIds: results.flatMap((r) => (r.post ? [r.post.id] : [])),
    sentWithinMs: lastSent - started,
    answeredWithinMs: Date.now() - started,
  };
}

/** What `schedulePosts()` did: three posts to be announced at `publishAt`; one deleted, one edited before. */
export interface ScheduledPosts {
  readonly publishAt: Date;
  /** Answers of the three `POST /posts` (201 each). */
  readonly createStatuses: readonly number[];
  /** Kept as written: its followers are told at `publishAt`. */
  readonly announced?: PostView;
  /** Deleted at once (204), which cancels its announcement. */
  readonly deleted?: PostView;
  readonly deleteStatus: number;
  /** Written for a minute later, then edited (200): a new title and `publishAt`; as it is after the edit. */
  readonly edited?: PostView;
  /** The event id the edited post had before the edit (cancelled by it). */
  readonly editedFrom?: string;
  readonly editStatus: number;
}

/**
 * The scheduled step: `authorId` writes three posts to be announced `aheadMs` from now (`publishAt`), the
 * third a minute later; then deletes the second, and edits the third (a new title, and `publishAt` like the
 * others). Each announcement waits in post-service's outbox as a scheduled message; the delete cancels the
 * second's in its transaction, the edit replaces the third's with one of the new title and time. Due at the
 * same time, the first one's notifications are the fence after which the second would have arrived.
 */
export async function schedulePosts(
  client: BlogClient,
  authorId: number,
  aheadMs: number,
  label: string,
): Promise<ScheduledPosts> {
  const publishAt = new Date(Date.now() + aheadMs);
  const write = (n: number, at: Date) =>
    client.createPost({
      authorId,
      title: `${label} #${n}`,
      content: `Announced at ${at.toISOString()}${n > 1 ? ', unless deleted or edited before' : ''}.`,
      publishAt: at.toISOString(),
    });
  const created = [
    await write(1, publishAt),
    await write(2, publishAt),
    await write(3, new Date(publishAt.getTime() + 60_000)),
  ];
  const [announced, deleted, toEdit] = created.map((r) => (r.status === 201 ? r.body : undefined));
  const deleteStatus = deleted ? (await client.deletePost(deleted.id)).status : 0;
  const edit = toEdit
    ? await client.updatePost(toEdit.id, {
        title: `${label} #3, edited`,
        publishAt: publishAt.toISOString(),
      })
    : undefined;
  return {
    publishAt,
    createStatuses: created.map((r) => r.status),
    announced,
    deleted,
    deleteStatus,
    edited: edit?.status === 200 ? edit.body : undefined,
    editedFrom: toEdit?.eventId ?? undefined,
    editStatus: edit?.status ?? 0,
  };
}

/** `{ 201: 10 }` → `10 × 201`. */
export function statusSummary(results: readonly PostResult[]): string {
  const counts = new Map<number, number>();
  results.forEach((r) => counts.set(r.status, (counts.get(r.status) ?? 0) + 1));
  return [...counts]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${n} × ${status === 0 ? 'no answer' : status}`)
    .join(', ');
}

/** How one subscriber's notifications compare with the posts they should have been told about. */
export interface SubscriberDelivery {
  readonly subscriberId: number;
  readonly expected: number;
  /** Distinct expected posts notified. */
  readonly received: number;
  readonly missing: number[];
  /** Posts notified more than once. */
  readonly twice: number[];
  /** Commit-to-notification latency of each expected notification, ms. */
  readonly latenciesMs: number[];
}

/** Every subscriber's delivery of a set of posts. */
export interface DeliveryCheck {
  readonly perSubscriber: readonly SubscriberDelivery[];
  readonly delivered: number;
  readonly expected: number;
  /** Every subscriber has every post. */
  readonly complete: boolean;
  /** Complete, and no post notified twice. */
  readonly exactlyOnce: boolean;
}

/** Compares notifications with the posts each subscriber should have been told about. */
export function checkDelivery(
  notifications: ReadonlyMap<number, readonly NotificationView[]>,
  subscriberIds: readonly number[],
  postIds: readonly number[],
): DeliveryCheck {
  const perSubscriber = subscriberIds.map((subscriberId): SubscriberDelivery => {
    const seen = new Map<number, NotificationView[]>();
    for (const n of notifications.get(subscriberId) ?? []) {
      if (postIds.includes(n.postId)) seen.set(n.postId, [...(seen.get(n.postId) ?? []), n]);
    }
    return {
      subscriberId,
      expected: postIds.length,
      received: seen.size,
      missing: postIds.filter((id) => !seen.has(id)),
      twice: [...seen].filter(([, list]) => list.length > 1).map(([id]) => id),
      latenciesMs: [...seen.values()].map(
        ([n]) => new Date(n.notifiedAt).getTime() - new Date(n.occurredAt).getTime(),
      ),
    };
  });
  const delivered = perSubscriber.reduce((sum, s) => sum + s.received, 0);
  const expected = subscriberIds.length * postIds.length;
  const complete = delivered === expected;
  return {
    perSubscriber,
    delivered,
    expected,
    complete,
    exactlyOnce: complete && perSubscriber.every((s) => s.twice.length === 0),
  };
}

/** Reads every subscriber's notifications. */
export async function readNotifications(
  client: BlogClient,
  subscriberIds: readonly number[],
): Promise<Map<number, NotificationView[]>> {
  const lists = await Promise.all(subscriberIds.map((id) => client.notifications(id)));
  return new Map(subscriberIds.map((id, i) => [id, lists[i]]));
}

/** Options of `waitForDelivery()`. */
export interface WaitOptions {
  timeoutMs: number;
  /** Called after every poll. */
  onProgress?: (check: DeliveryCheck) => void;
  everyMs?: number;
}

/**
 * Polls the subscribers' notifications until every one has every post, or the timeout passes; returns the
 * last check either way (the caller decides what an incomplete delivery means).
 */
export async function waitForDelivery(
  client: BlogClient,
  audience: Audience,
  postIds: readonly number[],
  options: WaitOptions,
): Promise<DeliveryCheck> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    let check: DeliveryCheck | undefined;
    try {
      check = checkDelivery(
        await readNotifications(client, audience.subscriberIds),
        audience.subscriberIds,
        postIds,
      );
      options.onProgress?.(check);
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    if (check && (check.complete || Date.now() > deadline)) return check;
    await sleep(options.everyMs ?? 200);
  }
}

/** Nearest-rank percentile; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
