import { BlogStack } from '../../../tools/demo/blog-stack';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { e2eBuild } from './e2e-build';
import { PrivateBroker, startPrivateBrokerFor } from './private-broker';

/** Both services as processes, on a broker and in schemas of the suite's own. */
export interface PrivateStack {
  readonly broker: PrivateBroker;
  readonly postDb: TestSchema;
  readonly subscribeDb: TestSchema;
  readonly stack: BlogStack;
  /** Stops the services and the broker, and drops the schemas. */
  stop(): Promise<void>;
}

/**
 * Starts a private broker for `transport`, a schema per service (named after `schemaPrefix`) and both
 * services, with `env` on top of the stack's. What did start is released again if a later step fails.
 */
export async function startPrivateStack(
  transport: 'kafka' | 'rabbitmq',
  options: { schemaPrefix: string; logDir: string; env: Record<string, string> },
): Promise<PrivateStack> {
  const schemas = await Promise.all([
    createTestSchema(`${options.schemaPrefix}_post`),
    createTestSchema(`${options.schemaPrefix}_subscribe`),
  ]);
  const [postDb, subscribeDb] = schemas;
  let broker: PrivateBroker | undefined;
  let stack: BlogStack | undefined;
  const stop = async () => {
    await stack?.stop();
    await broker?.destroy();
    await Promise.all(schemas.map((schema) => schema.drop()));
  };
  try {
    broker = await startPrivateBrokerFor(transport);
    stack = await BlogStack.start({
      transport,
      kafkaBrokers: broker.kafkaBrokers,
      amqpUrl: broker.amqpUrl,
      databases: {
        post: { url: postDb.databaseUrl, schema: postDb.name },
        subscribe: { url: subscribeDb.databaseUrl, schema: subscribeDb.name },
      },
      build: e2eBuild(),
      logDir: options.logDir,
      env: options.env,
    });
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return { broker, postDb, subscribeDb, stack, stop };
}
