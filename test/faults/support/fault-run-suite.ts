import { randomInt } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PostCreated } from '@app/contracts';
import { BlogClient } from '../../../tools/demo/blog-client';
import { createAudience, sleep } from '../../../tools/demo/blog-scenario';
import { SUBSCRIBE_GROUP } from '../../../tools/demo/blog-stack';
import { e2eBuild } from '../../e2e/support/e2e-build';
import { dialectLabel, TestDialect } from '../../harness/test-database';
import { DuplicateMeter } from './duplicate-meter';
import { notificationCount, pendingOutboxRows, readDatabaseFacts } from './fault-facts';
import { FaultInjector, planFaults, seconds } from './fault-injector';
import { faultProfile, FaultProfile, SeededRandom } from './fault-profile';
import { FaultRunFigures, renderFaultSummary } from './fault-report';
import { FaultStack, RunRelay, Transport } from './fault-stack';
import { judgeFaultRun, RunAudience } from './fault-verdict';
import { PostLoad } from './post-load';
import { logLines } from './service-log';
import { deadLetterCount, startWireWitness, WireWitness } from './wire-witness';

/**
 * Issue 8's fault run: post-service (twice, two relays on one outbox) and subscribe-service as processes on a
 * PostgreSQL cluster and a broker of the suite's own, a steady load of posts, and meanwhile, at seeded-random
 * moments: post-service SIGKILLed and restarted, subscribe-service SIGKILLed mid-batch and restarted, the
 * broker stopped and started, PostgreSQL restarted. Then quiescence, and the checks: from the databases and
 * from an independent raw consumer of the wire. Correctness is asserted; timings are printed, never asserted.
 */
export function faultRunSuite(
  transport: Transport,
  dialect: TestDialect = 'postgres',
  options: { readonly chaos?: boolean; readonly relay?: RunRelay } = {},
): void {
  const { chaos = false, relay = 'poll' } = options;
  const profile = faultProfile(process.env, chaos);
  const broker = transport === 'kafka' ? 'Kafka' : 'RabbitMQ';
  // Start-up and teardown of a private broker, cluster and three processes, on a busy 2-core machine.
  const setupTimeoutMs = 240_000;
  const runTimeoutMs = profile.loadMs * 2 + profile.quiescenceTimeoutMs + 180_000;

  const database = dialectLabel(dialect);
  const title = chaos ? 'Chaos (link faults, kills, restarts)' : 'Faults';
  const relayLabel = relay === 'logical' ? ', the logical relay' : '';
  describe(`${title} under load over ${broker} on ${database}${relayLabel}: ${profile.name} run, services as processes`, () => {
    let stack: FaultStack | undefined;
    let witness: WireWitness | undefined;
    const logDir = mkdtempSync(path.join(os.tmpdir(), `faults-${transport}-${dialect}-${relay}-`));
    const log = (line: string) => process.stdout.write(`[faults ${broker} on ${database}] ${line}\n`);

    beforeAll(async () => {
      log(`seed ${profile.seed} (replay with FAULTS_SEED=${profile.seed}); service logs in ${logDir}`);
      stack = await FaultStack.start(transport, dialect, e2eBuild(), logDir, { proxied: chaos, relay });
      witness = await startWireWitness(transport, stack.broker, PostCreated.destination);
    }, setupTimeoutMs);

    afterAll(async () => {
      await witness?.stop().catch(() => undefined);
      await stack?.destroy();
    }, setupTimeoutMs);

    // claim: C-9, C-23, C-29
    it(
      'loses no post, notifies every subscriber once per post, leaves nothing of a failed request, keeps each author in order',
      async () => {
        const s = stack!;
        const rng = new SeededRandom(profile.seed);
        const audience = await createRunAudience(s.client(), profile);
        const probe = {
          delivered: (postIds: readonly number[]) => notificationCount(s.database, postIds),
          expected: (postIds: readonly number[]) => expectedNotifications(audience, load, postIds),
        };
        const targets = s.posts.map((post) => ({
          name: post.name,
          client: s.client(post),
          available: (): boolean => injector.available(post),
        }));
        const load = new PostLoad({
          authorIds: audience.authorIds,
          postsPerSecond: profile.postsPerSecond,
          targets,
          tag: `run ${profile.seed}`,
        });
        const injector = new FaultInjector(s, load, probe, rng, log);
        const meter = new DuplicateMeter(s.subscribe);
        const plan = planFaults(profile, rng);
        log(`plan: ${plan.map((f) => `${f.kind} at ${seconds(f.atMs)}`).join(', ')}`);

        meter.start();
        load.start();
        const faults = await injector.run(plan);
        await sleep(load.startedAt + profile.loadMs - Date.now());
        await load.stop();
        const loadMs = Date.now() - load.startedAt;
        log(
          `load stopped after ${seconds(loadMs)}: ${load.requests.length} requests; waiting for quiescence`,
        );

        const quiescenceMs = await waitForQuiescence(
          s,
          () => expectedNotifications(audience, load),
          profile.quiescenceTimeoutMs,
        );
        await meter.stop();
        const facts = await readDatabaseFacts(s.database, SUBSCRIBE_GROUP, s.relay);
        const wire = await witness!.collect();
        const verdict = judgeFaultRun(load.requests, audience, facts, wire, { serverErrorsAmbiguous: chaos });
        const figures: FaultRunFigures = {
          transport,
          database,
          profile,
          loadMs,
          faults,
          suppressedFromLog: (await logLines(s.subscribe.logFile, /duplicate, skipped/)).length,
          suppressedFromMetrics: meter.total,
          differentPayloads: (await logLines(s.subscribe.logFile, /ID_CONFLICT/)).length,
          deadLettered: await deadLetterCount(transport, s.broker, PostCreated.destination, SUBSCRIBE_GROUP),
          quiescenceMs,
          logDir,
          links: s.links
            ? [s.links.broker, s.links.postDatabase, s.links.subscribeDatabase].map((p) => ({
                name: p.name,
                ...p.stats,
              }))
            : undefined,
        };
        process.stdout.write(`\n${renderFaultSummary(verdict, figures)}`);

        expect(faults.map((f) => f.kind).sort()).toEqual(plan.map((f) => f.kind).sort());
        expect(verdict.created).toBeGreaterThan(0);
        expect(verdict.createdButMissing).toEqual([]);
        expect(verdict.leftBehind).toEqual([]);
        expect(verdict.unexplainedPosts).toEqual([]);
        expect(verdict.outboxProblems).toEqual([]);
        expect(verdict.unpublished).toEqual([]);
        expect(verdict.lost).toEqual([]);
        expect(verdict.duplicatedNotifications).toEqual([]);
        expect(verdict.orphanNotifications).toEqual([]);
        expect(verdict.wire.unknown).toEqual([]);
        expect(verdict.inbox.unknown).toEqual([]);
        expect(verdict.inbox.records).toBe(verdict.committedPosts);
        expect(verdict.wireOrderViolations).toEqual([]);
        expect(verdict.notificationOrderViolations).toEqual([]);
        // Every duplicate on the wire reached the group and was absorbed by the inbox (plus redeliveries).
        expect(figures.suppressedFromLog).toBeGreaterThanOrEqual(verdict.wire.duplicates);
        expect(figures.differentPayloads).toBe(0);
        expect(figures.deadLettered).toBe(0);
      },
      runTimeoutMs,
    );
  });
}

/** Authors with `subscribersPerAuthor` subscribers each: one follows every author, the rest one author each. */
export async function createRunAudience(
  client: BlogClient,
  profile: Pick<FaultProfile, 'authors' | 'subscribersPerAuthor'>,
): Promise<RunAudience> {
  const audiences = [];
  for (let i = 0; i < profile.authors; i++) {
    audiences.push(await createAudience(client, profile.subscribersPerAuthor - 1));
  }
  // Above the ids createAudience() draws, below the integer column's limit.
  const everyone = randomInt(2_000_000_000, 2_147_483_647);
  for (const { authorId } of audiences) {
    const result = await client.subscribe(everyone, authorId);
    if (result.status !== 201) throw new Error(`Subscribing ${everyone} to ${authorId}: ${result.status}`);
  }
  return {
    authorIds: audiences.map((a) => a.authorId),
    subscribersOf: new Map(audiences.map((a) => [a.authorId, [...a.subscriberIds, everyone]])),
  };
}

/** Notifications the given 201 posts (default: all of them so far) must produce. */
function expectedNotifications(audience: RunAudience, load: PostLoad, postIds?: readonly number[]): number {
  const ids = postIds ? new Set(postIds) : undefined;
  return load
    .created()
    .filter((r) => r.postId !== undefined && (!ids || ids.has(r.postId)))
    .reduce((sum, r) => sum + (audience.subscribersOf.get(r.authorId)?.length ?? 0), 0);
}

/**
 * Waits until both relays published everything (no pending outbox row) and the notifications stopped
 * changing: every 201 post delivered and nothing new for a few seconds, or nothing new for 20 s.
 */
async function waitForQuiescence(
  stack: FaultStack,
  expected: () => number,
  timeoutMs: number,
): Promise<number> {
  const started = Date.now();
  let last = -1;
  let stableSince = Date.now();
  while (Date.now() - started < timeoutMs) {
    const [pending, count] = await Promise.all([
      pendingOutboxRows(stack.database, stack.relay),
      notificationCount(stack.database),
    ]).catch(() => [-1, -1]);
    if (count !== last) {
      last = count;
      stableSince = Date.now();
    }
    const stableMs = Date.now() - stableSince;
    if (pending === 0 && ((count >= expected() && stableMs >= 3_000) || stableMs >= 20_000)) {
      return Date.now() - started;
    }
    await sleep(500);
  }
  return Date.now() - started;
}
