import * as amqp from 'amqplib';
import { PostCreated } from '@app/contracts';
import { WireMessage } from 'nest-reliable-messaging/testing';
import { destinationNames } from 'nest-reliable-messaging/testing';
import { Audience, readNotifications } from '../../../tools/demo/blog-scenario';
import { BlogStack, SUBSCRIBE_GROUP } from '../../../tools/demo/blog-stack';
import { PrivateBroker } from '../../e2e/support/private-broker';
import { eventually } from '../../harness/eventually';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { drainQueue } from '../../integration/support/rabbit-wire';
import { TopicReader } from '../../integration/support/topic-reader';
import { idOf, postCreatedMessage, rawWriter, withBody, withHeaders } from './raw-post-messages';
import { logLines } from './service-log';

/** What must become of one message written onto the wire. */
export type RawOutcome =
  | { readonly kind: 'handled' }
  /** Dead-lettered with this `category/code`. */
  | { readonly kind: 'dead-lettered'; readonly failure: string }
  /** A type the group has no handler for: settled unhandled (acked, counted, logged once), never dead-lettered. */
  | { readonly kind: 'settled'; readonly type: string }
  /** The broker refuses to take it (the raw client's write fails). */
  | { readonly kind: 'refused'; readonly reason: RegExp };

export interface RawCase {
  readonly name: string;
  readonly message: WireMessage;
  readonly postId: number;
  readonly outcome: RawOutcome;
}

/** Kafka's default `message.max.bytes` (a record batch): what a broker takes without topic overrides. */
const KAFKA_MAX_BATCH_BYTES = 1_048_588;
const MIB = 1_048_576;

/**
 * Good `PostCreated` messages with a bad one after each: not JSON, JSON of the wrong schema, no message id,
 * an unknown type, a 1 MiB payload (Kafka: larger than the broker takes, so refused; RabbitMQ: dead-lettered),
 * on Kafka also one just under the broker's limit, and a known id with a different payload. One author, so
 * one key: on Kafka all in one partition, in this order.
 */
export function rawMessageCases(
  transport: 'kafka' | 'rabbitmq',
  authorId: number,
  firstPostId: number,
  /** Kafka: the largest title (bytes) of a message the broker still takes (see `largestAcceptedTitle()`). */
  largestTitle = KAFKA_MAX_BATCH_BYTES - 1_024,
): RawCase[] {
  let next = firstPostId;
  const good = (): RawCase => {
    const postId = next++;
    return {
      name: `good post ${postId}`,
      postId,
      message: postCreatedMessage({ postId, authorId, title: `Raw ${postId}` }),
      outcome: { kind: 'handled' },
    };
  };
  const bad = (
    name: string,
    change: (m: WireMessage, postId: number) => WireMessage,
    outcome: RawOutcome,
  ) => {
    const postId = next++;
    return {
      name,
      postId,
      message: change(postCreatedMessage({ postId, authorId, title: `Bad ${postId}` }), postId),
      outcome,
    };
  };
  const first = good();
  const huge = (m: WireMessage, postId: number, bytes: number) => oversized(m, postId, authorId, bytes);
  const bads = [
    bad('not JSON', (m) => withBody(m, '{"eventId": "not json'), {
      kind: 'dead-lettered',
      failure: 'DESERIALIZATION/INVALID_JSON',
    }),
    bad(
      'JSON of the wrong schema',
      (m, postId) =>
        withBody(m, JSON.stringify({ eventId: idOf(m), postId: String(postId), author: authorId })),
      { kind: 'dead-lettered', failure: 'VALIDATION/SCHEMA_MISMATCH' },
    ),
    bad('no message id', (m) => withHeaders(m, { 'msg.id': undefined }), {
      kind: 'dead-lettered',
      failure: 'DESERIALIZATION/MISSING_MESSAGE_ID',
    }),
    bad('an unknown type', (m) => withHeaders(m, { 'msg.type': 'PostDeleted' }), {
      kind: 'settled',
      type: 'PostDeleted',
    }),
    bad(
      'a 1 MiB payload',
      (m, postId) => huge(m, postId, MIB),
      transport === 'kafka'
        ? { kind: 'refused', reason: /larger than the max message size/i }
        : { kind: 'dead-lettered', failure: 'VALIDATION/SCHEMA_MISMATCH' },
    ),
    ...(transport === 'kafka'
      ? [
          bad('the largest payload the broker takes', (m, postId) => huge(m, postId, largestTitle), {
            kind: 'dead-lettered',
            failure: 'VALIDATION/SCHEMA_MISMATCH',
          }),
        ]
      : []),
    {
      name: 'a known message id with a different payload',
      postId: next++,
      message: postCreatedMessage({ postId: next - 1, authorId, title: 'Impostor' }, idOf(first.message)),
      outcome: { kind: 'dead-lettered', failure: 'VALIDATION/ID_CONFLICT' } as const,
    },
  ];
  return [first, ...bads.flatMap((b) => [b, good()])];
}

/** A `PostCreated` body whose title is `bytes` long: far over the schema's 200 characters. */
function oversized(message: WireMessage, postId: number, authorId: number, bytes: number): WireMessage {
  return withBody(
    message,
    JSON.stringify({ eventId: idOf(message), postId, authorId, title: 'x'.repeat(bytes) }),
  );
}

/**
 * The largest title of an oversized `PostCreated` message (as `rawMessageCases()` builds it) that the Kafka
 * broker still takes, found by writing to a scratch topic with the broker's defaults (as the services' topic).
 */
export async function largestAcceptedTitle(
  broker: PrivateBroker,
  authorId: number,
  postId: number,
): Promise<number> {
  const kafka = testKafka(broker.kafkaBrokers, 'faults-limit');
  const topics = new KafkaTopics(kafka);
  const topic = await topics.create(uniqueName('faults_limit'), 1);
  const producer = kafka.producer();
  await producer.connect();
  try {
    const fits = async (bytes: number) => {
      const m = oversized(postCreatedMessage({ postId, authorId, title: 'x' }), postId, authorId, bytes);
      return producer
        .send({ topic, messages: [{ key: m.key, value: m.body, headers: { ...m.headers } }] })
        .then(
          () => true,
          () => false,
        );
    };
    let [low, high] = [KAFKA_MAX_BATCH_BYTES - 4_096, KAFKA_MAX_BATCH_BYTES];
    if (!(await fits(low))) throw new Error(`The broker refuses a ${low}-byte title: not its default limit?`);
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (await fits(middle)) low = middle;
      else high = middle - 1;
    }
    return low;
  } finally {
    await producer.disconnect();
    await topics.cleanup();
  }
}

/**
 * Writes the cases in order and checks: good ones notified once each, to every subscriber, in order; bad ones
 * never notified, each dead-lettered (in order, with its failure) or refused, and named in a log line of
 * subscribe-service (the reused id among them: its first payload is kept, the impostor dead-lettered); one of a
 * type subscribe-service has no handler for is settled, never dead-lettered, its type logged.
 */
export async function expectRawMessagesHandled(
  transport: 'kafka' | 'rabbitmq',
  broker: PrivateBroker,
  stack: BlogStack,
  audience: Audience,
  cases: readonly RawCase[],
): Promise<void> {
  const writer = await rawWriter(transport, broker);
  const refusals = new Map<RawCase, string>();
  try {
    for (const c of cases) {
      await writer.write(c.message).catch((error: Error) => refusals.set(c, error.message));
    }
  } finally {
    await writer.close();
  }
  const refused = cases.filter((c) => c.outcome.kind === 'refused');
  expect([...refusals.keys()].map((c) => c.name)).toEqual(refused.map((c) => c.name));
  for (const c of refused) expect(refusals.get(c)).toMatch((c.outcome as { reason: RegExp }).reason);

  const goodIds = cases.filter((c) => c.outcome.kind === 'handled').map((c) => c.postId);
  const parked = cases.filter((c) => c.outcome.kind === 'dead-lettered');
  const dlq = await readDeadLetters(transport, broker, parked.length);
  expect(dlq.map((d) => d.failure)).toEqual(parked.map((c) => (c.outcome as { failure: string }).failure));
  expect(dlq.map((d) => d.messageId)).toEqual(parked.map((c) => idOf(c.message) ?? ''));

  await eventually(async () => {
    const notified = await readNotifications(stack.client, audience.subscriberIds);
    for (const subscriberId of audience.subscriberIds) {
      expect((notified.get(subscriberId) ?? []).map((n) => n.postId)).toEqual(goodIds);
    }
  }, 60_000);

  const warnings = await logLines(stack.subscribe.logFile, /WARN/);
  for (const c of parked) {
    const id = idOf(c.message);
    const named = id
      ? (line: string) => line.includes(`Message ${id} `)
      : (line: string) => line.includes('(no valid message id)');
    const failure = (c.outcome as { failure: string }).failure;
    expect({
      name: c.name,
      logged: warnings.some((l) => named(l) && l.includes(failure) && l.includes('dead-lettered')),
    }).toEqual({
      name: c.name,
      logged: true,
    });
  }
  const logged = await logLines(stack.subscribe.logFile, /has no handler for/);
  for (const c of cases) {
    if (c.outcome.kind !== 'settled') continue;
    const type = c.outcome.type;
    expect({ name: c.name, logged: logged.some((l) => l.includes(`no handler for ${type} `)) }).toEqual({
      name: c.name,
      logged: true,
    });
  }
  // The consumer is still running after all of it.
  expect((await stack.subscribe.health())?.consumers).toEqual([SUBSCRIBE_GROUP]);
}

/** The first `count` messages in subscribe-service's dead-letter destination. */
async function readDeadLetters(
  transport: 'kafka' | 'rabbitmq',
  broker: PrivateBroker,
  count: number,
): Promise<Array<{ messageId: string; failure: string }>> {
  const name = destinationNames.deadLetter(PostCreated.destination, SUBSCRIBE_GROUP);
  if (transport === 'kafka') {
    const reader = await new TopicReader(name, testKafka(broker.kafkaBrokers, 'faults-dlq-reader')).start();
    try {
      const records = await reader.waitFor(count, 90_000);
      return records.map((r) => ({
        messageId: r.headers['msg.id'] ?? '',
        failure: `${r.headers['msg.failure-category']}/${r.headers['msg.failure-code']}`,
      }));
    } finally {
      await reader.stop();
    }
  }
  const connection = await amqp.connect(broker.amqpUrl);
  try {
    const channel = await connection.createChannel();
    await eventually(
      async () => expect((await channel.checkQueue(name)).messageCount).toBeGreaterThanOrEqual(count),
      90_000,
    );
    await channel.close();
    const messages = await drainQueue(connection, name);
    return messages.map((m) => ({
      messageId: String(m.properties.headers?.['msg.id'] ?? ''),
      failure: `${String(m.properties.headers?.['msg.failure-category'])}/${String(m.properties.headers?.['msg.failure-code'])}`,
    }));
  } finally {
    await connection.close().catch(() => undefined);
  }
}
