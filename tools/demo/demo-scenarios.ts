import { BlogClient } from './blog-client';
import { BlogStack } from './blog-stack';
import {
  Audience,
  checkDelivery,
  createAudience,
  DeliveryCheck,
  PostBurst,
  readNotifications,
  sendPostsWithin,
  sleep,
  statusSummary,
  waitForDelivery,
} from './blog-scenario';
import { BrokerControl } from './broker-control';
import { DemoOptions } from './demo-options';
import { RegisterCleanup } from './demo-infrastructure';
import { duration, seconds } from './format';
import { colours, Progress } from './progress';
import { outageTimings } from './outage-timing';
import { metricValue } from './prometheus';

/* The demo's two scenarios, each with its live display. */

/** How long the demo waits for every notification before it calls a scenario failed. */
const DELIVERY_TIMEOUT_MS = 180_000;
/** How long the broker stays down after the posts were answered (to show that nothing is lost meanwhile). */
const HOLD_DOWN_MS = 2_000;

const c = colours();

/** What one scenario produced, for the summary. */
export interface ScenarioResult {
  readonly title: string;
  readonly burst: PostBurst;
  readonly delivery: DeliveryCheck;
  readonly published: number;
  readonly duplicates: number;
  /** Normal: from the first post sent to the last notification. Outage: from the start command to the last one. */
  readonly toFullDeliveryMs: number;
  readonly outage?: { stopMs: number; startMs: number; pendingWhileDown: number; deliveredWhileDown: number };
}

/** Counters read from both services' /metrics. */
interface Counters {
  published: number;
  /** Outbox rows not yet sent (the polling relay). */
  pending: number;
  /** Messages the logical relay read and the broker has not confirmed. */
  unconfirmed: number;
  duplicates: number;
}

/** What the scenarios drive: the services' client and their URLs (a BlogStack, or a compose stack's). */
export interface ScenarioStack {
  readonly client: BlogStack['client'];
  readonly post: { readonly url: string };
  readonly subscribe: { readonly url: string };
}

/** Posts the warm-up sends, one at a time, before the scenarios (not counted in the summary). */
const WARM_UP_POSTS = 5;

/**
 * Before the scenarios: an author of its own with one subscriber posts a few times, one post after the other's
 * notification, so that what the scenarios measure is the library at work, not a consumer group still joining
 * or connections still opening (the first message after a start waits for both). Returns how long the first
 * and the last warm-up post took from the request to the notification.
 */
export async function warmUp(
  stack: ScenarioStack,
  out: Progress,
): Promise<{ firstMs: number; lastMs: number; posts: number }> {
  const audience = await createAudience(stack.client, 1);
  const took: number[] = [];
  for (let i = 0; i < WARM_UP_POSTS; i += 1) {
    out.bar('warm-up  ', i, WARM_UP_POSTS, 'posts delivered');
    const sentAt = Date.now();
    const burst = await sendPostsWithin(stack.client, audience.authorId, 1, 0, 'warm-up');
    if (burst.postIds.length !== 1) {
      throw new Error(`The warm-up post was not accepted: ${statusSummary(burst.results)}.`);
    }
    const check = await waitForDelivery(stack.client, audience, burst.postIds, {
      timeoutMs: DELIVERY_TIMEOUT_MS,
      everyMs: 20,
    });
    if (!check.complete) {
      throw new Error(`The warm-up post was not delivered within ${seconds(DELIVERY_TIMEOUT_MS)}.`);
    }
    took.push(Date.now() - sentAt);
  }
  out.endBar(
    `  Warm-up: ${WARM_UP_POSTS} posts by another author, each delivered before the next; the first took ` +
      `${duration(took[0])} (the consumer group joining, connections opening), the last ${duration(took[took.length - 1])}. ` +
      'Not counted below.',
  );
  return { firstMs: took[0], lastMs: took[took.length - 1], posts: WARM_UP_POSTS };
}

/** Scenario 1: posts within the window, then every notification. */
export async function normalScenario(
  stack: ScenarioStack,
  audience: Audience,
  options: DemoOptions,
  out: Progress,
): Promise<ScenarioResult> {
  out.line(c.bold(`Scenario 1, normal: ${options.posts} posts within ${seconds(options.windowMs)}`));
  const before = await counters(stack);
  const burst = await postBurst(stack.client, audience, options, 'normal', out);
  const delivery = await deliver(stack.client, audience, burst, out, Date.now());
  const after = await counters(stack);
  return {
    title: '1. normal',
    burst,
    delivery: delivery.check,
    published: after.published - before.published,
    duplicates: after.duplicates - before.duplicates,
    toFullDeliveryMs: delivery.lastNotifiedAt - burst.startedAt,
  };
}

/** Scenario 2: broker stopped, posts accepted and held, broker started, every notification. */
export async function outageScenario(
  stack: ScenarioStack,
  audience: Audience,
  options: DemoOptions,
  outage: BrokerControl,
  out: Progress,
  register: RegisterCleanup,
): Promise<ScenarioResult> {
  out.line(c.bold(`Scenario 2, broker outage: stop the broker, ${options.posts} posts, start the broker`));
  const before = await counters(stack);
  out.line(`  Stopping ${outage.description}...`);
  const stopIssuedAt = Date.now();
  await outage.stop();
  const stoppedAt = Date.now();
  let down = true;
  register(`start ${outage.description} again if the demo left it stopped`, async () => {
    if (down) await outage.start();
  });
  out.line(`  Broker stopped in ${seconds(stoppedAt - stopIssuedAt)}.`);

  const burst = await postBurst(stack.client, audience, options, 'outage', out);
  await sleep(HOLD_DOWN_MS);
  const whileDown = checkDelivery(
    await readNotifications(stack.client, audience.subscriberIds),
    audience.subscriberIds,
    burst.postIds,
  );
  const held = await counters(stack);
  // The logical relay holds them read from the log and unconfirmed; the polling relay as outbox rows.
  const pendingWhileDown = options.relay === 'logical' ? held.unconfirmed : held.pending;
  out.line(
    `  While the broker is down: ${whileDown.delivered}/${whileDown.expected} notifications, ` +
      (options.relay === 'logical'
        ? `${pendingWhileDown} messages held by post-service's logical relay (read from PostgreSQL's log, ` +
          'not yet confirmed by the broker, so the slot keeps them).'
        : `${pendingWhileDown} messages held in post-service's outbox.`),
  );

  out.line(`  Starting ${outage.description}...`);
  const startIssuedAt = Date.now();
  await outage.start();
  down = false;
  const servingAt = Date.now();
  out.line(`  Broker serving again after ${seconds(servingAt - startIssuedAt)}.`);
  const delivery = await deliver(stack.client, audience, burst, out, startIssuedAt);
  const after = await counters(stack);
  const timings = outageTimings({
    stopIssuedAt,
    stoppedAt,
    startIssuedAt,
    servingAt,
    lastNotifiedAt: delivery.lastNotifiedAt,
  });
  return {
    title: '2. outage',
    burst,
    delivery: delivery.check,
    published: after.published - before.published,
    duplicates: after.duplicates - before.duplicates,
    toFullDeliveryMs: timings.toFullDeliveryMs,
    outage: {
      stopMs: timings.stopMs,
      startMs: timings.startMs,
      pendingWhileDown,
      deliveredWhileDown: whileDown.delivered,
    },
  };
}

/** Sends the scenario's posts with a live counter. */
async function postBurst(
  client: BlogClient,
  audience: Audience,
  options: DemoOptions,
  label: string,
  out: Progress,
): Promise<PostBurst & { startedAt: number }> {
  const startedAt = Date.now();
  out.bar('posts    ', 0, options.posts, 'answered');
  const burst = await sendPostsWithin(
    client,
    audience.authorId,
    options.posts,
    options.windowMs,
    label,
    (n) => out.bar('posts    ', n, options.posts, 'answered'),
  );
  const allCreated = burst.results.every((r) => r.status === 201);
  out.endBar(
    `  ${allCreated ? c.green('✔') : c.red('✘')} POST /posts: ${statusSummary(burst.results)}, ` +
      `sent within ${seconds(burst.sentWithinMs)}, all answered within ${seconds(burst.answeredWithinMs)}.`,
  );
  return { ...burst, startedAt };
}

/** Waits for every subscriber's notifications of the burst, with a live bar. */
async function deliver(
  client: BlogClient,
  audience: Audience,
  burst: PostBurst,
  out: Progress,
  since: number,
): Promise<{ check: DeliveryCheck; lastNotifiedAt: number }> {
  const check = await waitForDelivery(client, audience, burst.postIds, {
    timeoutMs: DELIVERY_TIMEOUT_MS,
    onProgress: (progress) =>
      out.bar(
        'delivered',
        progress.delivered,
        progress.expected,
        `notifications  ${seconds(Date.now() - since)}`,
      ),
  });
  const notifications = await readNotifications(client, audience.subscriberIds);
  const lastNotifiedAt = Math.max(
    ...[...notifications.values()]
      .flat()
      .filter((n) => burst.postIds.includes(n.postId))
      .map((n) => new Date(n.notifiedAt).getTime()),
  );
  out.endBar(
    check.complete
      ? `  ${c.green('✔')} ${check.delivered}/${check.expected} notifications: every subscriber has the ${burst.postIds.length} posts` +
          (check.exactlyOnce ? ', each once.' : c.red(', but some twice!'))
      : `  ${c.red('✘')} only ${check.delivered}/${check.expected} notifications after ${seconds(DELIVERY_TIMEOUT_MS)}.`,
  );
  return { check, lastNotifiedAt };
}

async function counters(stack: ScenarioStack): Promise<Counters> {
  const [post, subscribe] = await Promise.all([
    stack.client.metrics(stack.post.url),
    stack.client.metrics(stack.subscribe.url),
  ]);
  return {
    published: metricValue(post, 'messaging_outbox_published_total'),
    pending: metricValue(post, 'messaging_outbox_pending'),
    unconfirmed: metricValue(post, 'messaging_relay_unconfirmed_messages'),
    duplicates: metricValue(subscribe, 'messaging_consumer_messages_total', { outcome: 'duplicate' }),
  };
}
