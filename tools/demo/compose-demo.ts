/*
 * The blog post's scenarios against the compose stack (docker/compose.yml, already `up`), as a user with
 * Docker would drive it: the services on 127.0.0.1:3000 and :3001, the ops console on :3002 (or the ports
 * the compose file's variables give), the outage by `docker compose stop` and `start` of the broker. Then
 * graceful shutdown: post-service gets SIGTERM (`docker compose stop`) while posts are held in its outbox,
 * subscribe-service while it consumes, and after their restarts every subscriber has every post exactly
 * once. `.ci/containers.sh` runs it; by hand: `npx tsx tools/demo/compose-demo.ts`. Exits with 1 on any
 * failure.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { portOpen } from '../infra/ports';
import { BlogClient } from './blog-client';
import {
  checkDelivery,
  createAudience,
  readNotifications,
  sendPostsWithin,
  sleep,
  waitForDelivery,
} from './blog-scenario';
import { BrokerControl } from './broker-control';
import { REPO_ROOT } from './build-services';
import { parseDemoOptions } from './demo-options';
import { normalScenario, outageScenario, ScenarioStack, warmUp } from './demo-scenarios';
import { failureReasons, printSummary } from './demo-summary';
import { seconds } from './format';
import { httpRequest } from './http-request';
import { colours, createProgress, Progress } from './progress';

const run = promisify(execFile);
const c = colours();
const COMPOSE_FILE = path.join(REPO_ROOT, 'docker', 'compose.yml');
/** How long the services may take to answer their health checks after `up`. */
const READY_TIMEOUT_MS = 300_000;
/** Seconds `docker compose stop` waits after SIGTERM before it kills (SIGKILL). */
const STOP_GRACE_S = 30;
/** The compose file's ports on this machine (the same variables, the same defaults). */
const PORTS = {
  post: Number(process.env.POST_SERVICE_PORT || 3000),
  subscribe: Number(process.env.SUBSCRIBE_SERVICE_PORT || 3001),
  console: Number(process.env.OPS_CONSOLE_PORT || 3002),
  kafka: Number(process.env.KAFKA_PORT || 9092),
  rabbitmq: Number(process.env.RABBITMQ_PORT || 5672),
};

/** `docker compose -f docker/compose.yml …`; resolves with its output. */
export async function compose(...args: string[]): Promise<string> {
  const { stdout } = await run('docker', ['compose', '-f', COMPOSE_FILE, ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout.trim();
}

/** A compose service's container: its exit code and log. */
async function containerState(service: string): Promise<{ exitCode: number; running: boolean }> {
  const id = (await compose('ps', '-q', service)).split('\n')[0];
  const { stdout } = await run('docker', ['inspect', '-f', '{{.State.ExitCode}} {{.State.Running}}', id]);
  const [exitCode, running] = stdout.trim().split(' ');
  return { exitCode: Number(exitCode), running: running === 'true' };
}

/** Waits until `url` answers 200 (and `accept` likes its body). */
async function waitForHttp(url: string, accept: (body: string) => boolean = () => true): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const answer = await httpRequest('GET', url, undefined, 5_000);
      if (answer.status === 200 && accept(answer.text)) return;
      last = `${answer.status} ${answer.text.slice(0, 200)}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await sleep(1_000);
  }
  throw new Error(`${url} did not become ready within ${seconds(READY_TIMEOUT_MS)} (last: ${last}).`);
}

/** post-service answers, and subscribe-service's consumer is in its group. */
async function waitForServices(stack: ScenarioStack): Promise<void> {
  await waitForHttp(`${stack.post.url}/health`);
  await waitForHttp(
    `${stack.subscribe.url}/health/live`,
    (body) =>
      (JSON.parse(body) as { consumers?: string[] }).consumers?.includes('subscribe-service') ?? false,
  );
}

/** The broker's container: `docker compose stop` (SIGTERM) and `start`, the broker's port watched. */
function composeBrokerControl(transport: 'kafka' | 'rabbitmq'): BrokerControl {
  const port = PORTS[transport];
  return {
    description: `the ${transport} container (docker compose stop/start ${transport})`,
    async stop() {
      await compose('stop', '-t', String(STOP_GRACE_S), transport);
    },
    async start() {
      await compose('start', transport);
      const deadline = Date.now() + READY_TIMEOUT_MS;
      while (!(await portOpen(port))) {
        if (Date.now() > deadline) throw new Error(`${transport} did not listen on ${port} again.`);
        await sleep(250);
      }
    },
  };
}

/**
 * Graceful shutdown, each service while it holds something: post-service with posts held in its outbox
 * (the broker down), subscribe-service while it consumes a burst (the broker up). Each gets SIGTERM
 * (`docker compose stop`) and must end by itself within the grace period (a process that ignores SIGTERM is
 * killed: exit code 137); after both started again, every subscriber has every post exactly once.
 * (With the broker down, subscribe-service does not end within 30 s and is killed: a defect reported in
 * issue 44's closing note, not asserted here.)
 */
async function sigtermScenario(
  stack: ScenarioStack,
  transport: 'kafka' | 'rabbitmq',
  posts: number,
  out: Progress,
): Promise<boolean> {
  out.line(c.bold('Scenario 3, SIGTERM: each service stopped while it holds messages, then started'));
  const audience = await createAudience(stack.client, 2);
  const broker = composeBrokerControl(transport);
  const stop = async (service: string): Promise<boolean> => {
    const begun = Date.now();
    await compose('stop', '-t', String(STOP_GRACE_S), service);
    const tookMs = Date.now() - begun;
    const state = await containerState(service);
    const log = await compose('logs', '--no-color', '--tail', '30', service);
    const graceful = !state.running && state.exitCode !== 137;
    out.line(
      `  ${graceful ? c.green('✔') : c.red('✘')} ${service}: SIGTERM, ended in ${seconds(tookMs)} with exit ` +
        `code ${state.exitCode}${state.exitCode === 137 ? ' (killed: it did not end by itself)' : ''}.`,
    );
    const released = /Released \d+ claimed outbox rows on shutdown/.exec(log);
    if (released) out.line(`    its log: ${released[0]}`);
    return graceful;
  };
  await broker.stop();
  const held = await sendPostsWithin(stack.client, audience.authorId, posts, 1_000, 'sigterm, held');
  out.line(`  ${held.postIds.length}/${posts} posts accepted with the broker down, held in the outbox.`);
  const postStopped = await stop('post-service');
  await broker.start();
  await compose('start', 'post-service');
  await waitForServices(stack);
  const consumed = await sendPostsWithin(stack.client, audience.authorId, posts, 1_000, 'sigterm, consumed');
  const subscribeStopped = await stop('subscribe-service');
  await compose('start', 'subscribe-service');
  await waitForServices(stack);
  const postIds = [...held.postIds, ...consumed.postIds];
  const check = await waitForDelivery(stack.client, audience, postIds, { timeoutMs: 180_000 });
  out.line(
    `  ${check.exactlyOnce ? c.green('✔') : c.red('✘')} after the restarts: ${check.delivered}/${check.expected} ` +
      `notifications${check.complete ? (check.exactlyOnce ? ', each once.' : ', some twice!') : '.'}`,
  );
  return postStopped && subscribeStopped && postIds.length === 2 * posts && check.exactlyOnce;
}

async function main(): Promise<number> {
  const parsed = parseDemoOptions(process.argv.slice(2));
  if (parsed === 'help') return 0;
  const options = {
    ...parsed,
    transport: process.env.MESSAGING_TRANSPORT === 'rabbitmq' ? 'rabbitmq' : parsed.transport,
  } as typeof parsed;
  const out = createProgress();
  const stack: ScenarioStack = {
    client: new BlogClient(`http://127.0.0.1:${PORTS.post}`, `http://127.0.0.1:${PORTS.subscribe}`),
    post: { url: `http://127.0.0.1:${PORTS.post}` },
    subscribe: { url: `http://127.0.0.1:${PORTS.subscribe}` },
  };
  out.line(c.bold(`The blog post's scenarios against docker compose (${options.transport})`));
  await waitForServices(stack);
  await waitForHttp(`http://127.0.0.1:${PORTS.console}/health/live`);
  const signIn = await httpRequest(
    'GET',
    `http://127.0.0.1:${PORTS.console}/console/login`,
    undefined,
    5_000,
  );
  out.line(`  Services healthy; the ops console answers (GET /console/login: ${signIn.status}).`);
  await warmUp(stack, out);
  const audience = await createAudience(stack.client, options.subscribers);
  const normal = await normalScenario(stack, audience, options, out);
  const outage = await outageScenario(
    stack,
    audience,
    options,
    composeBrokerControl(options.transport),
    out,
    () => undefined,
  );
  const allPosts = [...normal.burst.postIds, ...outage.burst.postIds];
  const final = checkDelivery(
    await readNotifications(stack.client, audience.subscriberIds),
    audience.subscriberIds,
    allPosts,
  );
  printSummary(options, audience, [normal, outage], final, out);
  const requestsOk = [normal, outage].every((s) => s.burst.results.every((r) => r.status === 201));
  const scenariosPassed = final.exactlyOnce && requestsOk && allPosts.length === 2 * options.posts;
  if (!scenariosPassed) out.line(c.red(`FAIL: ${failureReasons(final, requestsOk).join('; ')}.`));
  const sigterm = await sigtermScenario(stack, options.transport, options.posts, out);
  const passed = scenariosPassed && sigterm && signIn.status === 200;
  out.line(
    passed
      ? c.green(
          c.bold('PASS: the compose stack delivered every post exactly once, outage and SIGTERM included.'),
        )
      : c.red(c.bold('FAIL: see above.')),
  );
  return passed ? 0 : 1;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
