import * as amqp from 'amqplib';
import { Kafka } from 'kafkajs';
import { PostgresRedriveLedger } from 'nest-reliable-messaging/redrive';
import { WireMessage } from 'nest-reliable-messaging/testing';
import { BlogStack } from '../../../tools/demo/blog-stack';
import { startOpsConsole } from '../../../tools/demo/ops-console';
import { ServiceProcess } from '../../../tools/demo/service-process';
import { KafkaBroker } from '../../../tools/infra/kafka-broker';
import { startPrivateBroker } from '../../harness/kafka';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { infraEnv } from '../../harness/infra';
import { RabbitVhost } from '../../integration/redrive/support/rabbit-vhost';
import { e2eBuild } from './e2e-build';

/** The demo's dead-letter destination (post-create, group subscribe-service), on both brokers. */
export const CONSOLE_DLQ = 'post-create.subscribe-service.dlq';

/** Both services as processes and the ops console, on a broker and in schemas of the suite's own. */
export interface ConsoleStack {
  readonly transport: 'kafka' | 'rabbitmq';
  readonly blog: BlogStack;
  readonly subscribeDb: TestSchema;
  /** The admin database's schema (the ledger, the audit log, the console's plans). */
  readonly adminDb: TestSchema;
  readonly opsConsole: ServiceProcess;
  /** The console's base URL, e.g. `http://127.0.0.1:4567/console`. */
  readonly base: string;
  /** Writes `message` straight into its `destination` (a DLQ) as the admin, as a subscriber parks one. */
  park(message: WireMessage): Promise<void>;
  stop(): Promise<void>;
}

/**
 * RabbitMQ: a vhost of the suite's own on the shared node, the services as its least-privilege user (no DLQ
 * reads), the console as its admin. Kafka: a private broker (the demo's topic names are fixed), the console as
 * the local admin. Either way an admin database of its own with the ledger migrated.
 */
export async function startConsoleStack(
  transport: 'kafka' | 'rabbitmq',
  options: { prefix: string; logDir: string },
): Promise<ConsoleStack> {
  const cleanups: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const [postDb, subscribeDb, adminDb] = await Promise.all(
      ['post', 'subscribe', 'admin'].map((role) => createTestSchema(`${options.prefix}_${role}`)),
    );
    cleanups.push(() => Promise.all([postDb, subscribeDb, adminDb].map((s) => s.drop())));
    await PostgresRedriveLedger.migrate({ url: adminDb.databaseUrl, schema: adminDb.name });
    let vhost: RabbitVhost | undefined;
    let kafka: KafkaBroker | undefined;
    if (transport === 'rabbitmq') {
      vhost = await RabbitVhost.create(options.prefix);
      cleanups.push(() => vhost!.delete());
    } else {
      kafka = await startPrivateBroker();
      cleanups.push(() => kafka!.destroy());
    }
    const blog = await BlogStack.start({
      transport,
      kafkaBrokers: kafka?.brokers ?? [],
      amqpUrl: vhost ? vhost.urlAs(vhost.service) : infraEnv().amqpUrl,
      topologyAmqpUrl: vhost?.urlAs(vhost.admin),
      databases: {
        post: { url: postDb.databaseUrl, schema: postDb.name },
        subscribe: { url: subscribeDb.databaseUrl, schema: subscribeDb.name },
      },
      build: e2eBuild(),
      logDir: options.logDir,
    });
    cleanups.push(() => blog.stop());
    const opsConsole = await startOpsConsole(e2eBuild(), {
      transport,
      amqpUrl: vhost ? vhost.urlAs(vhost.admin) : '',
      kafkaBrokers: kafka?.brokers ?? [],
      adminDatabase: { url: adminDb.databaseUrl, schema: adminDb.name },
      metrics: [
        { name: 'post-service', url: `${blog.post.url}/metrics` },
        { name: 'subscribe-service', url: `${blog.subscribe.url}/metrics` },
      ],
      deadLetterQueues: [CONSOLE_DLQ],
      dir: options.logDir,
    });
    cleanups.push(() => opsConsole.stop());
    const park = vhost
      ? (message: WireMessage) => parkOnRabbit(vhost.urlAs(vhost.admin), message)
      : (message: WireMessage) => parkOnKafka(kafka!.brokers, message);
    return {
      transport,
      blog,
      subscribeDb,
      adminDb,
      opsConsole,
      base: `${opsConsole.url}/console`,
      park,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function parkOnRabbit(url: string, message: WireMessage): Promise<void> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createConfirmChannel();
    channel.sendToQueue(message.destination, message.body, {
      persistent: true,
      messageId: message.headers['msg.id'],
      headers: message.key === null ? { ...message.headers } : { ...message.headers, 'msg.key': message.key },
    });
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
}

async function parkOnKafka(brokers: string[], message: WireMessage): Promise<void> {
  const producer = new Kafka({ clientId: 'e2e-park', brokers }).producer({ idempotent: true });
  await producer.connect();
  try {
    await producer.send({
      topic: message.destination,
      acks: -1,
      messages: [{ key: message.key, value: message.body, headers: { ...message.headers } }],
    });
  } finally {
    await producer.disconnect();
  }
}
