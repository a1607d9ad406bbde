/* npm run start:post | start:subscribe: one service in the foreground, for playing with curl. */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { DEFAULT_DATABASE_URL, infraEnv } from '../infra/env';
import { checkPostgres, checkRabbit, ensureKafka } from '../infra/services';
import { buildServices, REPO_ROOT, SERVICES, ServiceName } from './build-services';
import { applyBlogTopology, BLOG_SERVICE_ENV } from './blog-topology';
import { databaseUrl, ensureDatabase } from './databases';

const DATABASES: Record<ServiceName, string> = {
  'post-service': 'post_service',
  'subscribe-service': 'subscribe_service',
};

/**
 * Gets what the service needs (local Kafka started through the project's scripts, PostgreSQL and RabbitMQ
 * checked, the service's database created when DATABASE_URL is not set, the topology applied as the local
 * admin), builds it when the sources changed, and runs it in the foreground with this process's environment
 * (PORT, MESSAGING_TRANSPORT, ...; MESSAGING_KEY_SECRET defaults to the local development one).
 */
async function main(): Promise<number> {
  const service = process.argv[2] as ServiceName;
  if (!SERVICES.includes(service)) {
    console.error(`Usage: tsx tools/demo/start-service.ts ${SERVICES.join('|')}`);
    return 2;
  }
  const env = infraEnv();
  const transport = process.env.MESSAGING_TRANSPORT === 'rabbitmq' ? 'rabbitmq' : 'kafka';
  const log = (line: string) => console.log(`[start] ${line}`);

  const overrides: NodeJS.ProcessEnv = {};
  if (process.env.DATABASE_URL) {
    await checkPostgres(process.env.DATABASE_URL);
  } else {
    await checkPostgres(DEFAULT_DATABASE_URL);
    const name = DATABASES[service];
    if (await ensureDatabase(DEFAULT_DATABASE_URL, name)) log(`Created the PostgreSQL database ${name}.`);
    overrides.DATABASE_URL = databaseUrl(DEFAULT_DATABASE_URL, name);
  }
  if (transport === 'kafka') await ensureKafka(env, log);
  if (transport === 'rabbitmq') await checkRabbit(env.amqpUrl);
  // As an admin would with `messaging topology apply`: the service itself only checks the topology.
  await applyBlogTopology({ transport, kafkaBrokers: env.kafkaBrokers, amqpUrl: env.amqpUrl });
  log('Applied the topology (destination, work queue, dead-letter destination) as the local admin.');

  const build = await buildServices(path.join(REPO_ROOT, '.demo', 'build'), { reuseFresh: true });
  log(
    build.elapsedMs > 0
      ? `Built the services in ${(build.elapsedMs / 1000).toFixed(1)} s.`
      : 'Build up to date.',
  );

  const child = spawn(process.execPath, [build.entry(service)], {
    stdio: 'inherit',
    env: { ...BLOG_SERVICE_ENV, ...process.env, ...overrides },
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 0 : 1))));
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
