import { stat } from 'node:fs/promises';
import { sleep } from '../../../tools/demo/blog-scenario';
import { httpRequest } from '../../../tools/demo/http-request';
import { ServiceProcess } from '../../../tools/demo/service-process';
import { FaultKind, FaultProfile, SeededRandom } from './fault-profile';
import { injectLinkFault } from './link-faults';
import { FaultStack } from './fault-stack';
import { PostLoad } from './post-load';
import { logLinesSince, waitForLogLine } from './service-log';

/** subscribe-service's log line for each notification it stores. */
const NOTIFIED = /Subscriber \d+: new post/;

/** A fault planned for a moment of the load. */
export interface PlannedFault {
  readonly kind: FaultKind;
  /** When to inject it, ms after the load started. */
  readonly atMs: number;
}

/** A fault as it happened. */
export interface FaultRecord {
  readonly kind: FaultKind;
  /** What was hit: `post-service-b`, `Kafka on 127.0.0.1:40123`, `MariaDB (stop, immediate)`. */
  readonly target: string;
  /** When it was injected, ms after the load started. */
  readonly atMs: number;
  /** From injection until restored: the process healthy again, the broker or database server answering. */
  downMs: number;
  /** From restored until every post answered 201 before then has all its notifications. */
  recoveryMs?: number;
  /** Anything worth printing (e.g. how far into its batch subscribe-service was killed). */
  detail?: string;
}

/** What the injector needs to know about the delivery so far, to time each fault's recovery. */
export interface DeliveryProbe {
  /** Notifications stored for these posts (one per subscriber and post). */
  delivered(postIds: readonly number[]): Promise<number>;
  /** Notifications these posts must produce. */
  expected(postIds: readonly number[]): number;
}

/** How long a recovery is waited for before the run goes on (the final check decides correctness). */
const RECOVERY_TIMEOUT_MS = 120_000;

/** Seeded-random moments for the profile's faults, in the middle of the load, in a shuffled order. */
export function planFaults(profile: FaultProfile, rng: SeededRandom): PlannedFault[] {
  const kinds = rng.shuffle(
    (Object.entries(profile.faults) as Array<[FaultKind, number]>).flatMap(([kind, n]) =>
      Array<FaultKind>(n).fill(kind),
    ),
  );
  const from = profile.loadMs * 0.1;
  const slot = (profile.loadMs * 0.75) / kinds.length;
  return kinds.map((kind, i) => ({ kind, atMs: Math.round(from + slot * i + rng.next() * slot * 0.5) }));
}

/**
 * Injects the planned faults one after the other into the stack while the load runs, and times each
 * recovery before the next one (a fault whose moment has passed meanwhile is injected at once).
 */
export class FaultInjector {
  readonly records: FaultRecord[] = [];
  /** post-service instances the load must not send to right now. */
  private readonly down = new Set<ServiceProcess>();

  constructor(
    private readonly stack: FaultStack,
    private readonly load: PostLoad,
    private readonly probe: DeliveryProbe,
    private readonly rng: SeededRandom,
    private readonly log: (line: string) => void,
  ) {}

  /** False while the instance is being killed and restarted. */
  available(post: ServiceProcess): boolean {
    return !this.down.has(post) && post.running;
  }

  async run(plan: readonly PlannedFault[]): Promise<FaultRecord[]> {
    for (const fault of plan) {
      await sleep(this.load.startedAt + fault.atMs - Date.now());
      const record = await this.inject(fault.kind);
      this.records.push(record);
      await this.timeRecovery(record);
      this.log(
        `fault ${this.records.length}/${plan.length} ${record.kind} (${record.target}) at ${seconds(record.atMs)}: ` +
          `down ${seconds(record.downMs)}, recovered ${record.recoveryMs === undefined ? 'NOT within the timeout' : `in ${seconds(record.recoveryMs)}`}` +
          (record.detail ? `; ${record.detail}` : ''),
      );
    }
    return this.records;
  }

  private async inject(kind: FaultKind): Promise<FaultRecord> {
    const atMs = Date.now() - this.load.startedAt;
    const started = Date.now();
    const done = (target: string, detail?: string): FaultRecord => ({
      kind,
      target,
      atMs,
      downMs: Date.now() - started,
      detail,
    });
    switch (kind) {
      case 'post-kill': {
        const picked = this.rng.pick(this.stack.posts);
        // The logical relay: kill the instance reading the slot, so that the stand-by must take over.
        const reader = this.stack.relay === 'logical' ? await this.slotReader() : undefined;
        const post = reader ?? picked;
        this.down.add(post);
        try {
          await post.kill();
          await post.start();
        } finally {
          this.down.delete(post);
        }
        return done(post.name, reader ? 'it read the slot: the stand-by took over' : undefined);
      }
      case 'subscribe-kill':
        return done(this.stack.subscribe.name, await this.killSubscribeMidBatch());
      case 'broker-outage': {
        const holdMs = this.rng.between(2_000, 5_000);
        await this.stack.broker.outage.stop();
        await sleep(holdMs);
        await this.stack.broker.outage.start();
        return done(this.stack.broker.outage.description, `held down ${seconds(holdMs)}`);
      }
      case 'database-restart': {
        const mode = this.rng.pick(['fast', 'immediate'] as const);
        const holdMs = this.rng.between(1_000, 4_000);
        await this.stack.database.stop(mode);
        await sleep(holdMs);
        await this.stack.database.start();
        return done(`${this.stack.database.label} (stop, ${mode})`, `held down ${seconds(holdMs)}`);
      }
      default: {
        if (!this.stack.links) throw new Error(`${kind} needs the services' links behind fault proxies`);
        const { target, detail } = await injectLinkFault(
          kind,
          this.stack.links,
          this.stack.transport,
          this.rng,
          this.stack.relay,
        );
        return done(target, detail);
      }
    }
  }

  /** The post-service whose logical relay reads the slot now (its readiness report says `reading`). */
  private async slotReader(): Promise<ServiceProcess | undefined> {
    for (const post of this.stack.posts) {
      const answer = await httpRequest('GET', `${post.url}/health`, undefined, 5_000).catch(() => undefined);
      const report = answer ? (JSON.parse(answer.text) as { details?: { relay?: { state?: string } } }) : {};
      if (report.details?.relay?.state === 'reading') return post;
    }
    return undefined;
  }

  /**
   * Freezes subscribe-service (SIGSTOP) for a moment, under the consumer session timeout, so that messages
   * pile up and its next fetch is a batch of several; lets it go on (SIGCONT) and kills it (SIGKILL) as soon
   * as its log shows it handling the first of them; then starts it again.
   */
  private async killSubscribeMidBatch(): Promise<string> {
    const service = this.stack.subscribe;
    const pid = service.pid;
    if (pid === undefined) throw new Error('subscribe-service is not running');
    // Under the consumer's session timeout (FAULT_RUN_ENV), so that it keeps its partitions meanwhile.
    const freezeMs = this.rng.between(4_000, 6_000);
    process.kill(pid, 'SIGSTOP');
    await sleep(freezeMs);
    const from = await logSize(service);
    process.kill(pid, 'SIGCONT');
    const handled = await waitForLogLine(service.logFile, from, NOTIFIED, 15_000);
    await service.kill();
    const notified = (await logLinesSince(service.logFile, from, NOTIFIED)).length;
    await service.start();
    return handled
      ? `frozen ${seconds(freezeMs)}, killed after ${notified} notification(s) of the backlog`
      : `frozen ${seconds(freezeMs)}, killed before it handled anything (no backlog)`;
  }

  /** Waits until every post answered 201 up to now has all its notifications; records how long that took. */
  private async timeRecovery(record: FaultRecord): Promise<void> {
    const restoredAt = Date.now();
    const postIds = this.load.created().flatMap((r) => (r.postId === undefined ? [] : [r.postId]));
    const expected = this.probe.expected(postIds);
    while (Date.now() - restoredAt < RECOVERY_TIMEOUT_MS) {
      const delivered = await this.probe.delivered(postIds).catch(() => -1);
      if (delivered >= expected) {
        record.recoveryMs = Date.now() - restoredAt;
        return;
      }
      await sleep(250);
    }
  }
}

async function logSize(service: ServiceProcess): Promise<number> {
  return (await stat(service.logFile).catch(() => ({ size: 0 }))).size;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
