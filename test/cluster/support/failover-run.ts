import { sleep } from '../../../tools/demo/blog-scenario';
import { SUBSCRIBE_GROUP } from '../../../tools/demo/blog-stack';
import { notificationCount, pendingOutboxRows, readDatabaseFacts } from '../../faults/support/fault-facts';
import { createRunAudience } from '../../faults/support/fault-run-suite';
import { FaultVerdict, judgeFaultRun } from '../../faults/support/fault-verdict';
import { PostLoad } from '../../faults/support/post-load';
import { deadLetterCount, WireWitness } from '../../faults/support/wire-witness';
import { ClusterAccess, ClusterStack } from './cluster-stack';

/** One fault a failover run injects: what it does to a node, and how the node comes back. */
export interface NodeFault {
  /** For the report: `SIGKILL of the leader of post-create[0] (node 2)`. */
  readonly label: string;
  /** Injects the fault (kill, suspend). */
  inflict(): Promise<void>;
  /** Ends it (restart, resume); resolves once the node serves again. */
  heal(): Promise<void>;
  /** Watches what the brokers themselves take to serve without the node (Kafka: the election). */
  watch?(): Promise<RecoveryWatch>;
}

/** What the brokers did about a dead node, in ms after the fault (undefined: not seen while watched). */
export interface ElectionTimes {
  /** A new leader of the partition the fault aimed at, named by the surviving brokers' metadata. */
  readonly leaderElectedMs?: number;
  /**
   * Every partition the services write to (the topic's, the group's offsets) without the dead node in its
   * ISR: until then an acks=all write to a partition the node followed waits for it.
   */
  readonly isrShrunkMs?: number;
  /** The relay's side: the first acks=all write on the topic confirmed after the election. */
  readonly firstWriteMs?: number;
  /** The dead node coordinated the consumer group. */
  readonly coordinatorWasDead: boolean;
}

/** Watches the brokers from the fault until `stop()`. */
export interface RecoveryWatch {
  begin(faultAt: number): void;
  stop(): Promise<ElectionTimes>;
}

/** What a failover run measured. */
export interface FailoverFigures {
  readonly fault: string;
  /** From the fault to the first notification of a post sent after it. */
  readonly firstDeliveryMs?: number;
  /** What the brokers took (when the fault has a watch). */
  readonly election?: ElectionTimes;
  /** From the fault to the first moment every post answered so far (≥ 0.5 s ago) was notified. */
  readonly catchUpMs?: number;
  /** How long the node was down (until `heal()` resolved). */
  readonly downMs: number;
  readonly verdict: FaultVerdict;
  readonly deadLettered: number;
}

const POSTS_PER_SECOND = 8;
/** How long the node stays away before it is brought back. */
const AWAY_MS = 15_000;

/**
 * Steady load on the cluster stack, one node fault (kill or partition) while it runs, then quiescence and
 * the fault suite's checks. Times are measured and returned; `failoverTooSlow` holds them to a generous bound.
 */
export async function failoverRun(
  stack: ClusterStack,
  access: ClusterAccess,
  witness: WireWitness,
  fault: NodeFault,
  log: (line: string) => void,
): Promise<FailoverFigures> {
  const client = stack.client();
  // Three authors with three subscribers each, and one subscriber who follows all of them.
  const audience = await createRunAudience(client, { authors: 3, subscribersPerAuthor: 4 });
  const load = new PostLoad({
    authorIds: audience.authorIds,
    postsPerSecond: POSTS_PER_SECOND,
    targets: [{ name: 'post-service', client, available: () => true }],
    tag: `failover ${Date.now()}`,
  });
  const db = stack.database;
  const expected = (ids: readonly number[]) =>
    load
      .created()
      .filter((r) => ids.includes(r.postId as number))
      .reduce((n, r) => n + (audience.subscribersOf.get(r.authorId)?.length ?? 0), 0);

  load.start();
  // Steady state first: posts flow end to end.
  while ((await notificationCount(db)) < 3 * POSTS_PER_SECOND) await sleep(200);

  log(`${fault.label}`);
  const watch = await fault.watch?.();
  const faultAt = Date.now();
  watch?.begin(faultAt);
  await fault.inflict();
  const measuring = measure(load, faultAt, expected, stack);
  await sleep(AWAY_MS - (Date.now() - faultAt));
  const election = await watch?.stop();
  await fault.heal();
  const downMs = Date.now() - faultAt;
  log(`node back after ${downMs} ms`);
  const { firstDeliveryMs, catchUpMs } = await measuring;
  await sleep(3_000);
  await load.stop();

  // Quiescence: every outbox row published, every answered post notified (or nothing moves for 60 s).
  const allIds = () => load.created().map((r) => r.postId as number);
  for (let last = -1, stableSince = Date.now(); Date.now() - stableSince < 60_000; await sleep(500)) {
    const [pending, count] = await Promise.all([pendingOutboxRows(db), notificationCount(db)]);
    if (pending === 0 && count >= expected(allIds())) break;
    if (count !== last) [last, stableSince] = [count, Date.now()];
  }
  await sleep(2_000); // a late duplicate would show now
  const facts = await readDatabaseFacts(db, SUBSCRIBE_GROUP);
  const verdict = judgeFaultRun(load.requests, audience, facts, await witness.collect());
  const deadLettered = await deadLetterCount(access.transport, access, 'post-create', SUBSCRIBE_GROUP);
  return {
    fault: fault.label,
    firstDeliveryMs,
    election,
    catchUpMs,
    downMs,
    verdict,
    deadLettered,
  };
}

/**
 * Polls the notifications while the fault lasts and after: the first one of a post sent after the fault,
 * and the first moment nothing answered (half a second or more ago) waits for its notifications.
 */
async function measure(
  load: PostLoad,
  faultAt: number,
  expected: (ids: readonly number[]) => number,
  stack: ClusterStack,
): Promise<{ firstDeliveryMs?: number; catchUpMs?: number }> {
  let firstDeliveryMs: number | undefined;
  const deadline = faultAt + 240_000;
  while (Date.now() < deadline) {
    const now = Date.now();
    if (firstDeliveryMs === undefined) {
      const after = load
        .created()
        .filter((r) => r.sentAt > faultAt)
        .map((r) => r.postId as number);
      if (after.length > 0 && (await notificationCount(stack.database, after)) > 0) {
        firstDeliveryMs = Date.now() - faultAt;
      }
    }
    if (firstDeliveryMs !== undefined) {
      const settled = load
        .created()
        .filter((r) => (r.answeredAt ?? now) < now - 500)
        .map((r) => r.postId as number);
      if ((await notificationCount(stack.database, settled)) >= expected(settled)) {
        return { firstDeliveryMs, catchUpMs: Date.now() - faultAt };
      }
    }
    await sleep(100);
  }
  return { firstDeliveryMs };
}

/** The figures as the report prints them. */
export function renderFailover(broker: string, f: FailoverFigures): string {
  const ms = (v?: number) => (v === undefined ? 'never' : `${(v / 1000).toFixed(1)} s`);
  return [
    `[cluster ${broker}] ${f.fault}`,
    `  kill → first delivery ${ms(f.firstDeliveryMs)}, kill → full catch-up ${ms(f.catchUpMs)}, node away ${ms(f.downMs)}`,
    ...(f.election ? [renderSplit(f)] : []),
    `  posts answered 201: ${f.verdict.created}, notifications checked: ${f.verdict.deliveredNotifications} of ${f.verdict.expectedNotifications}`,
    `  lost ${f.verdict.lost.length}, duplicated notifications ${f.verdict.duplicatedNotifications.length}, ` +
      `duplicates on the wire ${f.verdict.wire.duplicates}, order violations ${f.verdict.notificationOrderViolations.length}, ` +
      `DLQ ${f.deadLettered}`,
  ].join('\n');
}

/**
 * The first delivery split into what the brokers took (a new leader; the dead node out of every ISR the
 * services write to) and what the clients took to notice: the relay's first write confirmed after the
 * election (the topic's end offsets move), then the consumer's first notification of a post sent after the
 * kill.
 */
function renderSplit(f: FailoverFigures): string {
  const s = (v?: number) => (v === undefined ? 'never' : `${(v / 1000).toFixed(1)} s`);
  const after = (later?: number, earlier?: number) =>
    later === undefined || earlier === undefined ? '–' : `+${((later - earlier) / 1000).toFixed(1)} s`;
  const e = f.election as ElectionTimes;
  const brokersDone = Math.max(e.leaderElectedMs ?? Infinity, e.isrShrunkMs ?? 0);
  const brokers = Number.isFinite(brokersDone) ? brokersDone : undefined;
  return [
    `  split: brokers ${s(brokers)} (leader elected ${s(e.leaderElectedMs)}, dead node out of the ISRs ${s(e.isrShrunkMs)}` +
      `${e.coordinatorWasDead ? ', it coordinated the consumer group' : ''})`,
    `relay notices ${after(e.firstWriteMs, brokers)} (first write confirmed at ${s(e.firstWriteMs)})`,
    `consumer notices ${after(f.firstDeliveryMs, e.firstWriteMs)}`,
  ].join(' → ');
}

/** The fault suite's checks, as expectations. */
/**
 * The failover figure as a claim (issue 41, claims C-58): the docs' target is a first delivery within 3 s of
 * the kill (1.8–3.6 s measured in CI). The bound asserted is generous enough for a loaded two-core machine,
 * and below the time the node stays away, so that a first delivery that waits for the node to come back, or
 * never comes, fails the run; catch-up must come within the measuring window too.
 */
export const FIRST_DELIVERY_BOUND_MS = 10_000;

/** What is wrong with a run's times (empty when the failover was within the bound). */
export function failoverTooSlow(f: Pick<FailoverFigures, 'firstDeliveryMs' | 'catchUpMs'>): string[] {
  const problems: string[] = [];
  if (f.firstDeliveryMs === undefined) problems.push('no delivery after the fault');
  else if (f.firstDeliveryMs > FIRST_DELIVERY_BOUND_MS) {
    problems.push(
      `first delivery ${f.firstDeliveryMs} ms after the fault, over ${FIRST_DELIVERY_BOUND_MS} ms`,
    );
  }
  if (f.catchUpMs === undefined) problems.push('never caught up within the measuring window');
  return problems;
}

export function expectNothingLost(f: FailoverFigures): void {
  expect(f.verdict.created).toBeGreaterThan(0);
  expect(f.verdict.createdButMissing).toEqual([]);
  expect(f.verdict.outboxProblems).toEqual([]);
  expect(f.verdict.unpublished).toEqual([]);
  expect(f.verdict.lost).toEqual([]);
  expect(f.verdict.duplicatedNotifications).toEqual([]);
  expect(f.verdict.orphanNotifications).toEqual([]);
  expect(f.verdict.wire.unknown).toEqual([]);
  expect(f.verdict.wireOrderViolations).toEqual([]);
  expect(f.verdict.notificationOrderViolations).toEqual([]);
  expect(f.deadLettered).toBe(0);
}
