/* npm run demo -- [--transport kafka|rabbitmq] [--cluster]: the blog post's two tests and a scheduled post, against the real services. */
import * as path from 'node:path';
import { BlogStack } from './blog-stack';
import { checkDelivery, createAudience, readNotifications } from './blog-scenario';
import { buildServices, BuiltServices, REPO_ROOT } from './build-services';
import { DEMO_USAGE, DemoOptions, parseDemoOptions } from './demo-options';
import {
  DemoInfrastructure,
  MissingInfrastructureError,
  prepareInfrastructure,
  RegisterCleanup,
} from './demo-infrastructure';
import { infraEnv } from '../infra/env';
import { createRelaySlot, logicalDatabaseServer } from './logical-database';
import { consoleBanner, DEMO_DLQ, localAdminDatabase, startOpsConsole } from './ops-console';
import { normalScenario, outageScenario, warmUp } from './demo-scenarios';
import { scheduledScenario } from './scheduled-scenario';
import { failureReasons, printSummary } from './demo-summary';
import { seconds } from './format';
import { colours, createProgress, Progress } from './progress';

const c = colours();

async function main(): Promise<number> {
  let options: DemoOptions | 'help';
  try {
    options = parseDemoOptions(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  if (options === 'help') {
    console.log(DEMO_USAGE);
    return 0;
  }

  const out = createProgress();
  const cleanups: Array<{ description: string; undo: () => Promise<unknown> }> = [];
  const register: RegisterCleanup = (description, undo) => cleanups.push({ description, undo });
  const runCleanups = async () => {
    if (cleanups.length === 0) return;
    out.line(c.bold('Cleaning up'));
    for (let next = cleanups.pop(); next; next = cleanups.pop()) {
      out.line(`  ${next.description}`);
      await next.undo().catch((error: Error) => out.line(c.red(`    failed: ${error.message}`)));
    }
  };
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    out.line(`\n${signal}: stopping what the demo started (again to force)...`);
    void runCleanups().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    return await runDemo(options, out, register);
  } catch (error) {
    out.line('');
    if (error instanceof MissingInfrastructureError) out.line(c.red(error.message));
    else out.line(c.red(`The demo failed: ${error instanceof Error ? error.message : String(error)}`));
    return 1;
  } finally {
    if (!interrupted) await runCleanups();
  }
}

async function runDemo(options: DemoOptions, out: Progress, register: RegisterCleanup): Promise<number> {
  const transportName = options.transport === 'kafka' ? 'Kafka' : 'RabbitMQ';
  const onMariadb = options.database === 'mariadb';
  const logical = options.relay === 'logical';
  const logDir = path.join(
    REPO_ROOT,
    '.demo',
    'logs',
    `${timestamp()}-${options.transport}${options.cluster ? '-cluster' : ''}${onMariadb ? '-mariadb' : ''}` +
      `${logical ? '-logical' : ''}`,
  );
  out.line(
    c.bold(
      `Transactional outbox demo: the blog post's scenario over ${transportName}` +
        `${options.cluster ? ' (a three-node cluster)' : ''}${onMariadb ? ', on MariaDB' : ''}` +
        `${logical ? ", post-service's relay reading PostgreSQL's log" : ''}`,
    ),
  );
  out.line('');

  out.line(c.bold('Infrastructure'));
  const prepared = await prepareInfrastructure(options, (line) => out.line(`  ${line}`), register);
  const infra: DemoInfrastructure = logical
    ? {
        ...prepared,
        database: await logicalDatabaseServer(
          infraEnv().databaseUrl,
          (line) => out.line(`  ${line}`),
          register,
        ),
      }
    : prepared;
  const databases = { post: 'post_service', subscribe: 'subscribe_service' } as const;
  for (const name of Object.values(databases)) {
    const created = await infra.database.ensure(name);
    out.line(`  ${infra.database.label} database ${name}: ${created ? 'created' : 'found'}.`);
  }
  if (logical) {
    out.line(`  nest-messaging relay slot create (post_service):`);
    for (const line of await createRelaySlot(infra.database.serviceUrl(databases.post)))
      out.line(`    ${line}`);
  }

  out.line(c.bold('Services'));
  const build = await buildServices(path.join(REPO_ROOT, '.demo', 'build'), { reuseFresh: true });
  out.line(
    build.elapsedMs > 0
      ? `  Built post-service and subscribe-service in ${seconds(build.elapsedMs)}.`
      : '  The build in .demo/build is up to date.',
  );
  const stack = await BlogStack.start({
    transport: options.transport,
    kafkaBrokers: infra.kafkaBrokers,
    amqpUrl: infra.amqpUrl,
    topologyAmqpUrl: infra.topologyAmqpUrl,
    cluster: options.cluster,
    relayMode: options.relay,
    databases: {
      post: { url: infra.database.serviceUrl(databases.post) },
      subscribe: { url: infra.database.serviceUrl(databases.subscribe) },
    },
    build,
    logDir,
  });
  register('stop post-service and subscribe-service', () => stack.stop());
  out.line(`  post-service      ${stack.post.url} (pid ${stack.post.pid})`);
  out.line(
    `  subscribe-service ${stack.subscribe.url} (pid ${stack.subscribe.pid}), consumer group subscribed`,
  );
  out.line(`  Logs: ${path.relative(process.cwd(), logDir) || logDir}/`);
  await startDemoConsole(options, infra, stack, build, logDir, out, register);

  await warmUp(stack, out);
  const audience = await createAudience(stack.client, options.subscribers);
  out.line(
    `  Author ${audience.authorId}, followed by ${audience.subscriberIds.length} subscribers: ` +
      `${audience.subscriberIds.join(', ')}.`,
  );
  out.line('');

  const normal = await normalScenario(stack, audience, options, out);
  out.line('');
  const outage = await outageScenario(stack, audience, options, infra.outage, out, register);
  out.line('');
  const scheduled = await scheduledScenario(stack, audience, out);
  out.line('');

  // The whole run once more, both scenarios together: nothing missing, nothing twice.
  const allPosts = [...normal.burst.postIds, ...outage.burst.postIds];
  const final = checkDelivery(
    await readNotifications(stack.client, audience.subscriberIds),
    audience.subscriberIds,
    allPosts,
  );
  printSummary(options, audience, [normal, outage], final, out);
  out.line(`Service logs: ${logDir}`);

  const requestsOk = [normal, outage].every((s) => s.burst.results.every((r) => r.status === 201));
  const passed = final.exactlyOnce && requestsOk && allPosts.length === 2 * options.posts && scheduled.passed;
  out.line(
    passed
      ? c.green(
          c.bold(
            `PASS: every subscriber got all ${allPosts.length} notifications exactly once, through a ${transportName} outage; ` +
              'the scheduled posts at their time (the edited one as edited), the deleted one never.',
          ),
        )
      : c.red(
          c.bold(
            `FAIL: ${[...failureReasons(final, requestsOk), ...(scheduled.passed ? [] : ['the scheduled step failed'])].join('; ')}.`,
          ),
        ),
  );
  return passed ? 0 : 1;
}

/** The ops console beside the services (its admin database on the local PostgreSQL); optional for the demo. */
async function startDemoConsole(
  options: DemoOptions,
  infra: DemoInfrastructure,
  stack: BlogStack,
  build: BuiltServices,
  logDir: string,
  out: Progress,
  register: RegisterCleanup,
): Promise<void> {
  try {
    const admin = await localAdminDatabase(infraEnv().databaseUrl);
    const opsConsole = await startOpsConsole(build, {
      transport: options.transport,
      amqpUrl: infra.amqpUrl,
      kafkaBrokers: infra.kafkaBrokers,
      adminDatabase: { url: admin.url },
      metrics: [
        { name: 'post-service', url: `${stack.post.url}/metrics` },
        { name: 'subscribe-service', url: `${stack.subscribe.url}/metrics` },
      ],
      deadLetterQueues: [DEMO_DLQ],
      dir: logDir,
    });
    register('stop the ops console', () => opsConsole.stop());
    consoleBanner(`${opsConsole.url}/console`).forEach((line) => out.line(`  ${line}`));
    out.line(
      '  (while the demo runs; `npm run start:console` keeps one running beside start:post/start:subscribe)',
    );
  } catch (error) {
    out.line(`  Operations console not started: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
