import { randomInt } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BlogStack } from '../../../tools/demo/blog-stack';
import {
  Audience,
  createAudience,
  DeliveryCheck,
  percentile,
  PostBurst,
  readNotifications,
  schedulePosts,
  sendPostsWithin,
  sleep,
  waitForDelivery,
} from '../../../tools/demo/blog-scenario';
import { httpRequest } from '../../../tools/demo/http-request';
import { metricValue } from '../../../tools/demo/prometheus';
import { eventually } from '../../harness/eventually';
import { TestSchema } from '../../harness/postgres';
import { PrivateBroker } from './private-broker';
import { PrivateStack, startPrivateStack } from './private-stack';

const POSTS = 10;
const SUBSCRIBERS = 3;
const DELIVERY_TIMEOUT_MS = 120_000;
/** Subscribers of the popular author: more than one INSERT of all of them could bind (65,535 parameters). */
const POPULAR = 20_000;
/** How far ahead the scheduled test's posts are announced: long enough to look before, short for the suite. */
const PUBLISH_AHEAD_MS = 4_000;

/**
 * The blog post's tests against post-service and subscribe-service running as processes, driven over HTTP:
 * normal, broker outage, post-service killed right after answering, posts announced at their `publishAt` (one
 * deleted before, never announced; one edited before, announced as edited), and a bad request. One set of
 * processes per transport; each test has an author and subscribers of its own. Correctness is asserted
 * (statuses, counts, exactly once); timings are printed, never asserted.
 */
export function blogScenarioSuite(transport: 'kafka' | 'rabbitmq'): void {
  const brokerName = transport === 'kafka' ? 'Kafka' : 'RabbitMQ';

  describe(`The blog post's scenario over ${brokerName}, services as processes`, () => {
    let privateStack: PrivateStack | undefined;
    let broker: PrivateBroker | undefined;
    let postDb: TestSchema;
    let subscribeDb: TestSchema;
    let stack: BlogStack;
    const logDir = mkdtempSync(path.join(os.tmpdir(), `e2e-${transport}-`));
    const timings: string[] = [];

    beforeAll(async () => {
      privateStack = await startPrivateStack(transport, {
        schemaPrefix: 'e2e',
        logDir,
        // A relay claim held by the killed process is taken over after 5 s rather than the default 30 s, and
        // after the Kafka restart the group hands the partitions on after 10 s rather than 30 s.
        env: { RELAY_LEASE_MS: '5000', KAFKA_SESSION_TIMEOUT_MS: '10000' },
      });
      ({ broker, postDb, subscribeDb, stack } = privateStack);
    });

    afterAll(async () => {
      await privateStack?.stop();
      process.stdout.write(
        `\n${brokerName} e2e timings (measured, not asserted):\n${timings.map((t) => `  ${t}`).join('\n')}\n` +
          `  service logs: ${logDir}\n`,
      );
    });

    /** Posts that are still unsent in post-service's outbox. */
    async function unsentOutboxRows(postIds: readonly number[]): Promise<number> {
      const [row] = await postDb.query<{ n: number }>(
        `select count(*)::int as n from messaging_outbox where sent_at is null and (payload->>'postId')::int = any($1)`,
        [postIds],
      );
      return row.n;
    }

    /** Notification rows in subscribe-service's table, per subscriber. */
    async function storedNotifications(audience: Audience): Promise<Record<number, number>> {
      const rows = await subscribeDb.query<{ subscriber_id: number; n: number }>(
        'select subscriber_id, count(*)::int as n from notifications where subscriber_id = any($1) group by subscriber_id',
        [audience.subscriberIds],
      );
      return Object.fromEntries(
        audience.subscriberIds.map((id) => [id, rows.find((r) => r.subscriber_id === id)?.n ?? 0]),
      );
    }

    async function metric(
      serviceUrl: string,
      name: string,
      labels?: Record<string, string>,
    ): Promise<number> {
      return metricValue(await stack.client.metrics(serviceUrl), name, labels);
    }

    function expectAllCreated(burst: PostBurst): void {
      expect(burst.results.map((r) => r.status)).toEqual(Array<number>(POSTS).fill(201));
      expect(new Set(burst.postIds).size).toBe(POSTS);
    }

    /** Every subscriber has every post of the burst, once, and nothing else from it. */
    async function expectExactlyOnce(audience: Audience, delivery: DeliveryCheck): Promise<void> {
      expect(
        delivery.perSubscriber.map((d) => ({ id: d.subscriberId, received: d.received, twice: d.twice })),
      ).toEqual(audience.subscriberIds.map((id) => ({ id, received: POSTS, twice: [] })));
      expect(await storedNotifications(audience)).toEqual(
        Object.fromEntries(audience.subscriberIds.map((id) => [id, POSTS])),
      );
    }

    function latency(delivery: DeliveryCheck): string {
      const all = delivery.perSubscriber.flatMap((d) => d.latenciesMs);
      return `p50 ${percentile(all, 50)} ms, p99 ${percentile(all, 99)} ms`;
    }

    // claim: C-8
    it(`normal: ${POSTS} posts within 1 s → every subscriber has the ${POSTS} notifications, once`, async () => {
      const audience = await createAudience(stack.client, SUBSCRIBERS);
      const burst = await sendPostsWithin(stack.client, audience.authorId, POSTS, 1_000, 'normal');
      expectAllCreated(burst);

      const started = Date.now();
      const delivery = await waitForDelivery(stack.client, audience, burst.postIds, {
        timeoutMs: DELIVERY_TIMEOUT_MS,
      });
      await expectExactlyOnce(audience, delivery);
      timings.push(
        `normal: delivered ${Date.now() - started} ms after the last answer; commit → notification ${latency(delivery)}`,
      );
    });

    // claim: C-83
    it(`outage: broker stopped, ${POSTS} posts all accepted, broker started → all ${POSTS} delivered, once`, async () => {
      const audience = await createAudience(stack.client, SUBSCRIBERS);
      await broker!.outage.stop();
      let down = true;
      try {
        const burst = await sendPostsWithin(stack.client, audience.authorId, POSTS, 1_000, 'outage');
        expectAllCreated(burst);
        // Committed with their posts, waiting in the outbox for the broker.
        expect(await unsentOutboxRows(burst.postIds)).toBe(POSTS);
        // Readiness says so: the service answers, its broker check is down.
        const during = await httpRequest('GET', `${stack.post.url}/health`, undefined, 10_000);
        expect(during.status).toBe(503);
        expect(
          (JSON.parse(during.text) as { error: Record<string, { status: string }> }).error.broker.status,
        ).toBe('down');

        const restarted = Date.now();
        await broker!.outage.start();
        down = false;
        const back = Date.now();
        const delivery = await waitForDelivery(stack.client, audience, burst.postIds, {
          timeoutMs: DELIVERY_TIMEOUT_MS,
        });
        await expectExactlyOnce(audience, delivery);
        expect(await unsentOutboxRows(burst.postIds)).toBe(0);
        await eventually(async () =>
          expect((await httpRequest('GET', `${stack.post.url}/health`, undefined, 10_000)).status).toBe(200),
        );
        timings.push(
          `outage: broker start took ${back - restarted} ms, then full delivery after ${Date.now() - back} ms`,
        );
      } finally {
        if (down) await broker!.outage.start();
      }
    });

    it(`crash: post-service SIGKILLed right after answering ${POSTS} posts, restarted → exactly ${POSTS} each`, async () => {
      const audience = await createAudience(stack.client, SUBSCRIBERS);
      const duplicatesBefore = await metric(stack.subscribe.url, 'messaging_consumer_messages_total', {
        outcome: 'duplicate',
      });
      const burst = await sendPostsWithin(stack.client, audience.authorId, POSTS, 1_000, 'crash');
      await stack.post.kill();
      expectAllCreated(burst);

      const restarted = Date.now();
      await stack.post.start();
      const delivery = await waitForDelivery(stack.client, audience, burst.postIds, {
        timeoutMs: DELIVERY_TIMEOUT_MS,
      });
      await expectExactlyOnce(audience, delivery);
      await eventually(async () => expect(await unsentOutboxRows(burst.postIds)).toBe(0));
      const duplicates =
        (await metric(stack.subscribe.url, 'messaging_consumer_messages_total', { outcome: 'duplicate' })) -
        duplicatesBefore;
      timings.push(
        `crash: ${burst.postIds.length} posts delivered ${Date.now() - restarted} ms after the restart began; ` +
          `${duplicates} redelivered copies suppressed by the inbox`,
      );
    });

    it(`popular author: one post reaches all ${POPULAR.toLocaleString('en')} subscribers, once each`, async () => {
      const deadLettered = () => metric(stack.subscribe.url, 'messaging_dead_lettered_total');
      const deadLetteredBefore = await deadLettered();
      const authorId = randomInt(1_000_000, 2_000_000_000);
      const firstSubscriber = randomInt(1_000_000, 2_000_000_000 - POPULAR);
      // Subscribed straight in the database: 20,000 HTTP requests would only make the test slow.
      await subscribeDb.query(
        `insert into subscriptions (subscriber_id, author_id) select $1::int + g, $2 from generate_series(0, $3::int - 1) g`,
        [firstSubscriber, authorId, POPULAR],
      );
      const burst = await sendPostsWithin(stack.client, authorId, 1, 0, 'popular');
      expect(burst.results.map((r) => r.status)).toEqual([201]);
      const [postId] = burst.postIds;

      const notified = async () => {
        const [row] = await subscribeDb.query<{ rows: number; subscribers: number }>(
          `select count(*)::int as rows, count(distinct subscriber_id)::int as subscribers
           from notifications where post_id = $1`,
          [postId],
        );
        return row;
      };
      await eventually(
        async () => expect(await notified()).toEqual({ rows: POPULAR, subscribers: POPULAR }),
        120_000,
      );
      const ends = { authorId, subscriberIds: [firstSubscriber, firstSubscriber + POPULAR - 1] };
      const delivery = await waitForDelivery(stack.client, ends, [postId], {
        timeoutMs: DELIVERY_TIMEOUT_MS,
      });
      expect(delivery.exactlyOnce).toBe(true);
      expect(await deadLettered()).toBe(deadLetteredBefore);
    });

    it('scheduled: posts announced at publishAt, not before; one deleted before never, one edited before as edited', async () => {
      const audience = await createAudience(stack.client, SUBSCRIBERS);
      const scheduled = await schedulePosts(stack.client, audience.authorId, PUBLISH_AHEAD_MS, 'scheduled');
      expect({
        created: scheduled.createStatuses,
        deleted: scheduled.deleteStatus,
        edited: scheduled.editStatus,
      }).toEqual({ created: [201, 201, 201], deleted: 204, edited: 200 });
      const { announced, deleted, edited, editedFrom, publishAt } = scheduled as Required<typeof scheduled>;
      expect(announced.publishAt).toBe(publishAt.toISOString());
      expect(edited).toMatchObject({ title: 'scheduled #3, edited', publishAt: publishAt.toISOString() });
      expect(edited.eventId).not.toBe(editedFrom);
      expect((await stack.client.getPost(deleted.id)).status).toBe(404);
      const ids = [announced.eventId, deleted.eventId, editedFrom, edited.eventId];
      // What waits as scheduled messages: the kept post's and the edit's; the delete and the edit cancelled theirs.
      const waiting = await postDb.query<{ message_id: string }>(
        'select message_id from messaging_outbox_scheduled where message_id = any($1) order by message_id',
        [ids],
      );
      expect(waiting.map((row) => row.message_id)).toEqual([announced.eventId, edited.eventId].sort());

      // Nobody is told before publishAt.
      while (Date.now() < publishAt.getTime() - 500) {
        const early = await readNotifications(stack.client, audience.subscriberIds);
        expect([...early.values()].flat()).toEqual([]);
        await sleep(500);
      }
      const delivery = await waitForDelivery(stack.client, audience, [announced.id, edited.id], {
        timeoutMs: DELIVERY_TIMEOUT_MS,
      });
      expect(delivery.perSubscriber.map((d) => [d.received, d.twice])).toEqual(
        audience.subscriberIds.map(() => [2, []]),
      );
      // The deleted post was due at the same time: a while after the others arrived, it still has not.
      await sleep(2_000);
      const notifications = [
        ...(await readNotifications(stack.client, audience.subscriberIds)).values(),
      ].flat();
      expect(notifications.map((n) => [n.postId, n.title, n.eventId]).sort()).toEqual(
        audience.subscriberIds
          .flatMap(() => [
            [announced.id, announced.title, announced.eventId],
            [edited.id, 'scheduled #3, edited', edited.eventId],
          ])
          .sort(),
      );
      const notifiedAt = notifications.map((n) => new Date(n.notifiedAt).getTime());
      expect(Math.min(...notifiedAt)).toBeGreaterThanOrEqual(publishAt.getTime());
      const published = await postDb.query<{ message_id: string }>(
        'select message_id from messaging_outbox where message_id = any($1) order by message_id',
        [ids],
      );
      expect(published.map((r) => r.message_id)).toEqual([announced.eventId, edited.eventId].sort());
      // Announced now: its publishAt cannot move any more.
      const late = await stack.client.updatePost(edited.id, { publishAt: new Date().toISOString() });
      expect(late.status).toBe(409);
      timings.push(
        `scheduled: first notification ${Math.min(...notifiedAt) - publishAt.getTime()} ms after ` +
          `publishAt, the last ${Math.max(...notifiedAt) - publishAt.getTime()} ms`,
      );
    });

    // claim: C-100
    it('bad request: 400 naming each bad field (413 when too large), nothing recorded, no message sent', async () => {
      const audience = await createAudience(stack.client, 1);
      const counts = async () => {
        const [row] = await postDb.query<{ posts: number; outbox: number }>(
          'select (select count(*)::int from posts) as posts, (select count(*)::int from messaging_outbox) as outbox',
        );
        return row;
      };
      const consumed = () =>
        metric(stack.subscribe.url, 'messaging_consumer_messages_total', { outcome: 'handled' });
      const before = {
        ...(await counts()),
        published: await metric(stack.post.url, 'messaging_outbox_published_total'),
        consumed: await consumed(),
      };

      const invalid: Array<[unknown, string[]]> = [
        [
          { authorId: 'seven', title: '', content: 42, admin: true },
          ['admin', 'authorId', 'content', 'title'],
        ],
        [{ title: 'No author', content: 'text' }, ['authorId']],
        [{ authorId: 1.5, title: 'x'.repeat(201), content: 'text' }, ['authorId', 'title']],
        [{ authorId: audience.authorId, title: 'Empty', content: '' }, ['content']],
      ];
      for (const [body, fields] of invalid) {
        const result = await stack.client.createPost(body);
        expect(result.status).toBe(400);
        const errors = (result.body as unknown as { errors: Array<{ field: string }> }).errors;
        expect(errors.map((e) => e.field).sort()).toEqual(fields);
      }
      expect((await stack.client.createPostRaw('{"authorId": 1, "title": ')).status).toBe(400);
      const oversized = JSON.stringify({
        authorId: audience.authorId,
        title: 'Big',
        content: 'x'.repeat(20_000),
      });
      expect((await stack.client.createPostRaw(oversized)).status).toBe(413);
      expect((await stack.client.getPost(2_000_000_000)).status).toBe(404);

      expect(await counts()).toEqual({ posts: before.posts, outbox: before.outbox });
      // A valid post as a fence: once its notification is in, the broker carried exactly one message.
      const fence = await sendPostsWithin(stack.client, audience.authorId, 1, 0, 'fence');
      expect(fence.results.map((r) => r.status)).toEqual([201]);
      const delivery = await waitForDelivery(stack.client, audience, fence.postIds, {
        timeoutMs: DELIVERY_TIMEOUT_MS,
      });
      expect(delivery.exactlyOnce).toBe(true);
      expect(await counts()).toEqual({ posts: before.posts + 1, outbox: before.outbox + 1 });
      expect(await metric(stack.post.url, 'messaging_outbox_published_total')).toBe(before.published + 1);
      await eventually(async () => expect(await consumed()).toBe(before.consumed + 1));
    });
  });
}
