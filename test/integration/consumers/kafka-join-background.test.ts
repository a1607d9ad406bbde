import { TestingModule } from '@nestjs/testing';
import { rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../../../tools/infra/ports';
import { MessagingHealthIndicator, MessagingStatus } from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { infraEnv } from '../../harness/infra';
import { uniqueName } from '../../harness/names';
import { FixtureProcess } from '../support/child-process';
import { CONSUMER_PROCESS, useConsumerProcesses } from '../support/consumer-processes';
import { createMessagingApp } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage } from '../support/raw-messages';

/** The session timeout of both members: a killed member holds its group's rebalance this long. */
const SESSION_TIMEOUT_MS = 20_000;
/** How soon the restarted application must have started: well before the killed member's session expires. */
const STARTED_WITHIN_MS = 6_000;
/** Kafka's default session timeout (kafkajs's, and the library's), as the issue measured it: 30 s of no HTTP. */
const DEFAULT_SESSION_TIMEOUT_MS = 30_000;

/**
 * Issue 37, item 2: after a consumer is SIGKILLed, the broker holds its group's rebalance until the killed
 * member's session expires. The restarted application starts at once (its consumer joins in the background),
 * its health says the group is still joining, and it consumes once joined; closing it mid-join is quick.
 */
describe('A Kafka consumer restarted after a SIGKILL', () => {
  const suite = useConsumerProcesses('join_bg');
  let app: TestingModule | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** A consumer process of `group` that has handled a message (it has joined), SIGKILLed. */
  async function killedMember(destination: string, group: string, sessionTimeoutMs: number): Promise<void> {
    const env = {
      SCHEMA: suite.schema.name,
      DESTINATION: destination,
      GROUP: group,
      TRANSPORT: 'kafka',
      SESSION_TIMEOUT_MS: String(sessionTimeoutMs),
    };
    const first = await suite.start(env);
    await suite.send('kafka', [orderMessage(destination, { customer: 'before', seq: 0 })]);
    await eventually(async () => expect(await handledCount(group)).toBe(1), 60_000).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}\nconsumer log:\n${first.log.slice(-3000)}`);
      },
    );
    await first.kill();
  }

  /** POSTs an order to the app on `port`; resolves with the status (0: no answer, e.g. not listening). */
  async function post(port: number, seq: number): Promise<number> {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customer: `c${seq % 7}`, seq }),
        signal: AbortSignal.timeout(5_000),
      });
      return response.status;
    } catch {
      return 0;
    }
  }

  async function handledCount(group: string): Promise<number> {
    const rows = await suite.schema.query<{ n: string }>(
      'select count(*) as n from handled_orders where consumer_group = $1',
      [group],
    );
    return Number(rows[0].n);
  }

  function startApp(destination: string, group: string, sessionTimeoutMs: number): Promise<TestingModule> {
    return createMessagingApp({
      schema: suite.schema.name,
      migrate: false,
      transport: { kind: 'kafka', brokers: infraEnv().kafkaBrokers, sessionTimeoutMs },
      entities: [HandledOrder],
      providers: [
        { provide: ConsumerProbe, useValue: new ConsumerProbe() },
        ordersConsumer(orderPlaced(destination), group),
      ],
      messaging: { serviceName: group, relay: { enabled: false } },
    });
  }

  // claim: C-107
  it('starts at once, reports the group joining until it has joined, then consumes', async () => {
    const destination = uniqueName('join_bg');
    const group = uniqueName('g');
    await suite.destination('kafka', destination, group, 2);
    await killedMember(destination, group, SESSION_TIMEOUT_MS);

    const startedAt = Date.now();
    app = await startApp(destination, group, SESSION_TIMEOUT_MS);
    const startMs = Date.now() - startedAt;
    expect(startMs).toBeLessThan(STARTED_WITHIN_MS);

    const health = app.get(MessagingHealthIndicator);
    const status = app.get(MessagingStatus);
    expect(status.snapshot()).toMatchObject({ consumers: [], joining: [group] });
    expect(health.consumers()).toEqual({
      consumers: expect.objectContaining({ status: 'down', running: [], joining: [group] }) as unknown,
    });

    await suite.send('kafka', [orderMessage(destination, { customer: 'after', seq: 1 })]);
    await eventually(async () => expect(await handledCount(group)).toBe(2), 60_000);
    expect(health.consumers()).toEqual({ consumers: { status: 'up', running: [group], joining: [] } });
    expect(status.snapshot()).toMatchObject({ consumers: [group], joining: [] });
    console.log(`started in ${startMs} ms; joined after ${Date.now() - startedAt} ms`);
  });

  // Issue 37, item 2's test: kill -9 under load, time to the first accepted POST.
  // claim: C-107
  it('accepts its first POST soon after a SIGKILL under load, well before the session expires', async () => {
    const destination = uniqueName('join_bg');
    const group = uniqueName('g');
    await suite.destination('kafka', destination, group, 2);
    const port = await freePort();
    const env = {
      SCHEMA: suite.schema.name,
      DESTINATION: destination,
      GROUP: group,
      TRANSPORT: 'kafka',
      SESSION_TIMEOUT_MS: String(DEFAULT_SESSION_TIMEOUT_MS),
      HTTP_PORT: String(port),
      DELAY_MS: '20', // the handler takes a while: messages are in flight when the process dies
    };
    const first = await suite.start(env);
    // The load: POSTs back to back (each an order and its event, relayed and consumed by the same app).
    let accepted = 0;
    let loading = true;
    const load = (async () => {
      for (let seq = 0; loading; seq++) {
        if ((await post(port, seq)) === 202) accepted++;
      }
    })();
    await eventually(async () => expect(await handledCount(group)).toBeGreaterThanOrEqual(20), 60_000).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}\napp log:\n${first.log.slice(-3000)}`);
      },
    );
    // The restart, its modules loaded beforehand (ts-node takes seconds on a busy machine, and is the test's
    // cost, not the application's start): it starts when the file is written, right after the kill.
    const startFile = path.join(os.tmpdir(), `${uniqueName('start')}.go`);
    const restarted = new FixtureProcess(CONSUMER_PROCESS, { ...env, START_WHEN: startFile });
    try {
      const restarting = restarted.start(120_000); // resolves once it printed READY (after it listens)
      restarting.catch(() => undefined);
      await eventually(() => expect(restarted.log).toContain('LOADED'), 60_000);
      await first.kill();
      loading = false;
      await load;

      const restartedAt = Date.now();
      await writeFile(startFile, '');
      let firstAcceptedAt: number | undefined;
      for (let seq = 1_000_000; firstAcceptedAt === undefined; seq++) {
        if ((await post(port, seq)) === 202) firstAcceptedAt = Date.now();
        else if (Date.now() - restartedAt > 2 * DEFAULT_SESSION_TIMEOUT_MS) break;
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await restarting;
      expect(firstAcceptedAt).toBeDefined();
      const firstAcceptedMs = (firstAcceptedAt as number) - restartedAt;
      console.log(
        `${accepted} POSTs accepted before the SIGKILL; the restarted application accepted its first POST ` +
          `${firstAcceptedMs} ms after it began to start (session timeout ${DEFAULT_SESSION_TIMEOUT_MS} ms)`,
      );
      expect(firstAcceptedMs).toBeLessThan(DEFAULT_SESSION_TIMEOUT_MS / 2);
      // And it consumes once its group has joined: every accepted order is handled (at least once).
      await eventually(
        async () => expect(await handledCount(group)).toBeGreaterThanOrEqual(accepted + 1),
        3 * DEFAULT_SESSION_TIMEOUT_MS,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\napp log:\n${restarted.log.slice(-3000)}`);
      });
    } finally {
      await restarted.kill();
      await rm(startFile, { force: true });
    }
  }, 180_000);

  it('closes quickly while its consumer is still joining', async () => {
    const destination = uniqueName('join_bg');
    const group = uniqueName('g');
    await suite.destination('kafka', destination, group, 2);
    const sessionTimeoutMs = 10_000;
    await killedMember(destination, group, sessionTimeoutMs);

    const started = await startApp(destination, group, sessionTimeoutMs);
    expect(started.get(MessagingStatus).snapshot().joining).toEqual([group]);
    const closingAt = Date.now();
    await started.close();
    expect(Date.now() - closingAt).toBeLessThan(5_000);
    // The abandoned join is answered once the killed member's session expires; the consumer, stopped, then
    // ends without restarting. Waited for here so that nothing of it runs after the suite.
    await new Promise((resolve) => setTimeout(resolve, sessionTimeoutMs));
  });
});
