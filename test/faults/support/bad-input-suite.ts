import { randomInt } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BlogClient } from '../../../tools/demo/blog-client';
import { createAudience, readNotifications, waitForDelivery } from '../../../tools/demo/blog-scenario';
import { BlogStack, SUBSCRIBE_GROUP } from '../../../tools/demo/blog-stack';
import { httpRequest } from '../../../tools/demo/http-request';
import { ServiceProcess } from '../../../tools/demo/service-process';
import { e2eBuild } from '../../e2e/support/e2e-build';
import { PrivateBroker } from '../../e2e/support/private-broker';
import { PrivateStack, startPrivateStack } from '../../e2e/support/private-stack';
import { eventually } from '../../harness/eventually';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { serviceProcess, Transport } from './fault-stack';
import { BAD_REQUESTS, EDGE_POSTS } from './http-cases';
import { expectRawMessagesHandled, largestAcceptedTitle, rawMessageCases } from './raw-message-cases';
import { logLines } from './service-log';

/**
 * Issue 8's bad input against the services as processes, on a broker of the suite's own: HTTP requests the
 * services must refuse (Kafka suite only: the HTTP edge does not depend on the transport), messages written
 * straight onto the services' topic or exchange by a raw client, and a broker that is unreachable when the
 * services start.
 */
export function badInputSuite(transport: Transport): void {
  const brokerName = transport === 'kafka' ? 'Kafka' : 'RabbitMQ';

  describe(`Bad input over ${brokerName}, services as processes`, () => {
    let privateStack: PrivateStack | undefined;
    let broker: PrivateBroker;
    let postDb: TestSchema;
    let subscribeDb: TestSchema;
    let stack: BlogStack;
    const logDir = mkdtempSync(path.join(os.tmpdir(), `bad-input-${transport}-`));

    beforeAll(async () => {
      privateStack = await startPrivateStack(transport, {
        schemaPrefix: 'bad',
        logDir,
        env: { KAFKA_SESSION_TIMEOUT_MS: '10000' },
      });
      ({ broker, postDb, subscribeDb, stack } = privateStack);
    });

    afterAll(async () => {
      await privateStack?.stop();
      process.stdout.write(`\n[bad input ${brokerName}] service logs: ${logDir}\n`);
    });

    if (transport === 'kafka') {
      describe('HTTP', () => {
        let before: Record<string, number>;
        const rowCounts = async () => ({
          ...(
            await postDb.query<{ posts: number; outbox: number }>(
              'select (select count(*)::int from posts) as posts, (select count(*)::int from messaging_outbox) as outbox',
            )
          )[0],
          ...(
            await subscribeDb.query<{ subscriptions: number }>(
              'select count(*)::int as subscriptions from subscriptions',
            )
          )[0],
        });

        beforeAll(async () => {
          before = await rowCounts();
        });

        it.each(BAD_REQUESTS.map((c) => [c.name, c] as const))(
          'refuses %s with a clear error',
          async (_, c) => {
            const base = c.service === 'post' ? stack.post.url : stack.subscribe.url;
            const answer = await httpRequest(c.method, `${base}${c.path}`, c.body, 30_000);
            expect(answer.status).toBe(c.status);
            const body = JSON.parse(answer.text) as {
              statusCode: number;
              message: string;
              errors?: Array<{ field: string }>;
            };
            expect(body.statusCode).toBe(c.status);
            expect(body.message).toEqual(expect.any(String));
            if (c.fields) expect((body.errors ?? []).map((e) => e.field).sort()).toEqual(c.fields);
          },
        );

        it('wrote nothing for them; posts on the edge of the limits are accepted, stored as sent and delivered once', async () => {
          expect(await rowCounts()).toEqual(before);
          const audience = await createAudience(stack.client, 1);
          const postIds: number[] = [];
          for (const fields of EDGE_POSTS) {
            const created = await stack.client.createPost({ authorId: audience.authorId, ...fields });
            expect(created.status).toBe(201);
            const stored = await stack.client.getPost(created.body!.id);
            expect({ title: stored.body?.title, content: stored.body?.content }).toEqual(fields);
            postIds.push(created.body!.id);
          }
          const delivery = await waitForDelivery(stack.client, audience, postIds, { timeoutMs: 120_000 });
          expect(delivery.exactlyOnce).toBe(true);
          const [notifications] = (await readNotifications(stack.client, audience.subscriberIds)).values();
          expect(notifications.map((n) => n.title)).toEqual(EDGE_POSTS.map((p) => p.title));
          expect(await rowCounts()).toEqual({
            ...before,
            posts: before.posts + EDGE_POSTS.length,
            outbox: before.outbox + EDGE_POSTS.length,
            subscriptions: before.subscriptions + 1,
          });
          // Nothing the services could not handle: no 500 in either log.
          expect(await logLines(stack.post.logFile, /ExceptionsHandler/)).toEqual([]);
          expect(await logLines(stack.subscribe.logFile, /ExceptionsHandler/)).toEqual([]);
        });
      });
    }

    it('dead-letters or refuses each bad message written onto the wire, naming it in a log line, settles one of a type it does not handle; handles every good one around them once, in order', async () => {
      const audience = await createAudience(stack.client, 2);
      const firstPostId = randomInt(100_000_000, 900_000_000);
      const largest =
        transport === 'kafka'
          ? await largestAcceptedTitle(broker, audience.authorId, firstPostId)
          : undefined;
      const cases = rawMessageCases(transport, audience.authorId, firstPostId, largest);
      await expectRawMessagesHandled(transport, broker, stack, audience, cases);
    });

    it('starts with the broker unreachable: health reports it, the relay keeps retrying, posts written meanwhile are delivered once it is up', async () => {
      const [postSchema, subscribeSchema] = await Promise.all([
        createTestSchema('nobroker_post'),
        createTestSchema('nobroker_subscribe'),
      ]);
      const common = {
        transport,
        kafkaBrokers: broker.kafkaBrokers,
        amqpUrl: broker.amqpUrl,
        build: e2eBuild(),
        logDir,
        env: { KAFKA_SESSION_TIMEOUT_MS: '10000' },
        waitForConsumer: false,
      };
      const subscribe = await serviceProcess({
        ...common,
        service: 'subscribe-service',
        name: 'subscribe-service-no-broker',
        databaseUrl: subscribeSchema.databaseUrl,
        schema: subscribeSchema.name,
      });
      const post = await serviceProcess({
        ...common,
        service: 'post-service',
        name: 'post-service-no-broker',
        databaseUrl: postSchema.databaseUrl,
        schema: postSchema.name,
      });
      // The services started for the tests above are in the same consumer group (same queue on RabbitMQ):
      // they would take these messages. This is the suite's last test; they stop here.
      await stack.stop();
      await broker.outage.stop();
      let down = true;
      try {
        await subscribe.start();
        await post.start();
        for (const service of [post, subscribe]) await expectBrokerDown(service);
        expect((await subscribe.health())?.consumers).toEqual([]);

        const client = new BlogClient(post.url, subscribe.url);
        const audience = await createAudience(client, 2);
        const postIds: number[] = [];
        for (let i = 0; i < 5; i++) {
          const created = await client.createPost({
            authorId: audience.authorId,
            title: `Offline ${i}`,
            content: 'C',
          });
          expect(created.status).toBe(201);
          postIds.push(created.body!.id);
        }
        // The relay says once that the broker confirms nothing (not a line a round), and keeps trying: the
        // attempts are counted in the line it writes when publishing works again (below).
        await eventually(
          async () =>
            expect(
              await logLines(post.logFile, /Publishing outbox messages: .*not confirmed.*summarised every/),
            ).toHaveLength(1),
          60_000,
          500,
        );
        // Rounds with nothing confirmed, from post-service's /metrics: the relay keeps trying.
        await eventually(
          async () => expect(await failedPublishRounds(post)).toBeGreaterThanOrEqual(3),
          60_000,
          500,
        );
        expect(await postSchema.query('select 1 from messaging_outbox where sent_at is not null')).toEqual(
          [],
        );

        await broker.outage.start();
        down = false;
        const delivery = await waitForDelivery(client, audience, postIds, { timeoutMs: 180_000 });
        expect(delivery.exactlyOnce).toBe(true);
        for (const service of [post, subscribe]) {
          await eventually(async () => expect((await readiness(service)).status).toBe(200), 60_000, 500);
        }
        const [recovered] = await logLines(post.logFile, /Publishing outbox messages works again after/);
        expect(Number(/\((\d+) failures\)/.exec(recovered ?? '')?.[1])).toBeGreaterThanOrEqual(3);
        expect(await logLines(post.logFile, /not confirmed .*retrying in/)).toEqual([]);
        expect((await subscribe.health())?.consumers).toEqual([SUBSCRIBE_GROUP]);
      } finally {
        if (down) await broker.outage.start();
        await Promise.all([post.kill(), subscribe.kill()]);
        await Promise.all([postSchema.drop(), subscribeSchema.drop()]);
      }
    });
  });
}

/** `GET /health` (terminus readiness): status and body. */
async function readiness(
  service: ServiceProcess,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await httpRequest('GET', `${service.url}/health`, undefined, 10_000);
  return { status: answer.status, body: JSON.parse(answer.text) as Record<string, unknown> };
}

async function expectBrokerDown(service: ServiceProcess): Promise<void> {
  const { status, body } = await readiness(service);
  expect(status).toBe(503);
  expect((body.error as Record<string, { status: string }>).broker.status).toBe('down');
  expect((body.info as Record<string, { status: string }>).database.status).toBe('up');
}

/** `messaging_broker_errors_total{operation="publish"}` of a service: relay rounds the broker confirmed nothing of. */
async function failedPublishRounds(service: ServiceProcess): Promise<number> {
  const answer = await httpRequest('GET', `${service.url}/metrics`, undefined, 10_000);
  const line = /^messaging_broker_errors_total\{[^}]*operation="publish"[^}]*\} (\d+)$/m.exec(answer.text);
  return Number(line?.[1] ?? 0);
}
