/* npm run start:post | start:subscribe: one service in the foreground, for playing with curl. */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { infraEnv } from '../infra/env';
import { checkMariadb, checkPostgres, checkRabbit, ensureKafka } from '../infra/services';
import { buildServices, REPO_ROOT, SERVICES, ServiceName } from './build-services';
import { applyBlogTopology, BLOG_SERVICE_ENV } from './blog-topology';
import { mariadbServer, postgresServer } from './databases';

const DATABASES: Record<ServiceName, string> = {
  'post-service': 'post_service',
  'subscribe-service': 'subscribe_service',
};

/**
 * Gets what the service needs (local Kafka started through the project's scripts, RabbitMQ checked, the
 * service's database created on the local PostgreSQL, or MariaDB with `--database mariadb`, when
 * DATABASE_URL is not set, the topology applied as the local admin), builds it when the sources changed,
 * and runs it in the foreground with this process's environment (PORT, MESSAGING_TRANSPORT, ...;
 * MESSAGING_KEY_SECRET defaults to the local development one).
 */
async function main(): Promise<number> {
  const [service, ...flags] = process.argv.slice(2) as [ServiceName, ...string[]];
  const database = flags.length === 0 ? 'postgres' : flags[0] === '--database' ? flags[1] : undefined;
  if (
    !SERVICES.includes(service) ||
    flags.length > 2 ||
    (database !== 'postgres' && database !== 'mariadb')
  ) {
    console.error(
      `Usage: tsx tools/demo/start-service.ts ${SERVICES.join('|')} [--database postgres|mariadb]`,
    );
    return 2;
  }
  const env = infraEnv();
  const transport = process.env.MESSAGING_TRANSPORT === 'rabbitmq' ? 'rabbitmq' : 'kafka';
  const log = (line: string) => console.log(`[start] ${line}`);

  const overrides: NodeJS.ProcessEnv = {};
  const given = process.env.DATABASE_URL;
  if (given) {
    await (/^(mysql|mariadb):/.test(given) ? checkMariadb(given) : checkPostgres(given));
  } else {
    const server = database === 'mariadb' ? mariadbServer(env.mariadbUrl) : postgresServer(env.databaseUrl);
    await server.check();
    const name = DATABASES[service];
    if (await server.ensure(name)) log(`Created the ${server.label} database ${name}.`);
    overrides.DATABASE_URL = server.serviceUrl(name);
  }
  if (transport === 'kafka') await ensureKafka(env, log);
  if (transport === 'rabbitmq') await checkRabbit(env.amqpUrl);
  // As an admin would with `messaging topology apply`: the service itself only checks the topology.
  // On a cluster (three or more Kafka brokers, or AMQP_QUEUE_TYPE=quorum): RF 3 topics, quorum queues.
  const cluster = process.env.AMQP_QUEUE_TYPE === 'quorum' || env.kafkaBrokers.length >= 3;
  await applyBlogTopology({ transport, kafkaBrokers: env.kafkaBrokers, amqpUrl: env.amqpUrl, cluster });
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
