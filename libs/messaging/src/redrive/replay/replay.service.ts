import { v7 as uuidv7 } from 'uuid';
import { Clock, systemClock } from '../../common/clock';
import { assertPeerInstalled } from '../../common/optional-peer';
import { AdminCredential, checkAdminConnection } from '../admin-connection';
import { ApproverKeyring } from '../approvals/approver-keyring';
import { ApprovalAlreadyUsedError } from '../errors/approval-already-used.error';
import { ApprovalRequiredError } from '../errors/approval-required.error';
import { RedrivePlanStaleError } from '../errors/redrive-plan-stale.error';
import { ReplayWindowError } from '../errors/replay-window.error';
import { AuditOverride, RedriveAuditEntry } from '../ledger/redrive-ledger.interface';
import { checkPinnedTopology } from '../pinned-fingerprints';
import { verifyApprovedPlan } from '../plan-verification';
import { approvalEvidence, RedriveApproval } from '../redrive-approval';
import { RedriveAudit } from '../redrive-audit';
import { isLocalDevelopment, requireCredential } from '../redrive-guards';
import { RedriveServiceOptions } from '../redrive-service-options';
import type * as KafkaReplayModule from './kafka-replay';
import type * as RabbitReplayModule from './rabbit-replay';
import { ReplayBackend, ReplayedPartition } from './replay-backend';
import { replayCopy } from './replay-copy';
import { ReplayLimits } from './replay-limits';
import { PacerClock, ReplayPacer } from './replay-pacer';
import {
  replayDetail,
  ReplayInboxMode,
  ReplayPartitionWindow,
  ReplayPlan,
  sealReplayPlan,
} from './replay-plan';
import { checkReplayRoute, replayTargetOf } from './replay-review';
import { checkRate, checkWindows } from './replay-window';

/** What to replay: a topic's (or RabbitMQ destination's) window, for one group. Give `from` and `to`, or `offsets`. */
export interface ReplayRequest {
  /** The topic whose records are replayed; on RabbitMQ the destination, whose journal is read. */
  readonly topic: string;
  /** The one consumer group that gets them again. */
  readonly group: string;
  /** The window's start: the first record at or after this time. */
  readonly from?: Date;
  /** The window's end (exclusive): the records before the first at or after this time. */
  readonly to?: Date;
  /** The window as offsets per partition, `[from, to)`, instead of times (RabbitMQ: the journal's, partition 0). */
  readonly offsets?: readonly ReplayPartitionWindow[];
  /** What the group's inbox does with the copies (see `ReplayInboxMode`). */
  readonly inbox: ReplayInboxMode;
  /** At most this many copies per second; default `ReplayLimits.DEFAULT_RATE_PER_SECOND`. */
  readonly ratePerSecond?: number;
  /** The planner, when a front end acts for a user; default: the credential's principal. */
  readonly plannedBy?: string;
}

/** What an execution of a replay plan did. */
export interface ReplayResult {
  /** The plan's replay id (the copies' `msg.replay-id`). */
  readonly replayId: string;
  /** This execution's id, in its audit entries (`redriveId`). */
  readonly executionId: string;
  /** The topic replayed (and published to); on RabbitMQ the destination (the copies go to the group's work queue). */
  readonly source: string;
  /** The group the copies are for. */
  readonly group: string;
  /** Copies published and confirmed. */
  readonly published: number;
  /** Records of the window not replayed (a redrive's copy for another group, no message id). */
  readonly skipped: number;
  /** True when every partition's window was done; false when a copy was not confirmed (see `partitions`). */
  readonly complete: boolean;
  /** What became of each partition's window. */
  readonly partitions: readonly ReplayedPartition[];
}

/** A replay plan with the approval checked against it; only `ReplayService.approve()` makes one. */
export interface ApprovedReplayPlan {
  /** The plan, exactly as it was approved. */
  readonly plan: ReplayPlan;
  /** The approval that was verified against `plan`. */
  readonly approval: RedriveApproval;
}

/** `RedriveServiceOptions`, and the clock a replay is paced by (tests give a virtual one). */
export interface ReplayServiceOptions extends RedriveServiceOptions {
  /** The clock the rate is kept on; default the system clock. */
  readonly pacing?: PacerClock;
}

/**
 * Replay of a Kafka topic's window, or of a RabbitMQ destination's from its journal (a stream queue,
 * `JournalTopology`), to one consumer group (docs/guide/08-redrive.md, Replay a window), on the
 * redrive's path: `plan()` resolves the window and records a PLAN entry; an approver signs the plan's hash
 * (`issueApproval`, `signApproval`) with the same four eyes; `approve()` checks it as a redrive's
 * (`verifyApprovedPlan`); `execute()` claims the approval once, with a STARTED entry, holds the
 * (topic, group) exclusively and publishes the copies at the plan's rate, then records what it did.
 */
export class ReplayService {
  private readonly credential: AdminCredential;
  private readonly clock: Pick<Clock, 'now'>;
  private readonly audit: RedriveAudit;
  private readonly skippedChecks: readonly AuditOverride[];
  private readonly approved = new WeakMap<ApprovedReplayPlan, string>();
  private backendInstance?: ReplayBackend;

  constructor(private readonly options: ReplayServiceOptions) {
    const { broker } = options;
    const noPassword = broker.kind === 'kafka' && !broker.sasl && isLocalDevelopment(broker);
    this.credential = requireCredential(options.credential, noPassword);
    this.skippedChecks = checkAdminConnection(broker) ? ['insecure-transport'] : [];
    this.clock = options.clock ?? systemClock;
    this.audit = new RedriveAudit(options.ledger, broker.kind, this.credential.principal, this.skippedChecks);
  }

  /** A dry run: resolves the window, publishes nothing; the plan's PLAN entry goes to the audit log. */
  async plan(request: ReplayRequest): Promise<ReplayPlan> {
    const actor = request.plannedBy ?? this.credential.principal;
    const about = { action: 'PLAN' as const, actor, source: request.topic, target: request.topic };
    return this.audit.refusalsOf(about, async () => {
      const backend = this.backend();
      await checkPinnedTopology(this.options.ledger, this.options.topology);
      checkReplayRoute(request.topic, request.group, this.options.topology);
      if (request.inbox !== 'skip' && request.inbox !== 'reprocess') {
        throw new ReplayWindowError(
          `the inbox mode is 'skip' or 'reprocess', not '${String(request.inbox)}'`,
        );
      }
      const ratePerSecond = checkRate(request.ratePerSecond ?? ReplayLimits.DEFAULT_RATE_PER_SECOND);
      const watermarks = await backend.watermarks(request.topic);
      let asked: readonly ReplayPartitionWindow[];
      let window: ReplayPlan['window'];
      if (request.offsets) {
        if (request.from || request.to) throw new ReplayWindowError('give two times or offsets, not both');
        asked = request.offsets;
        window = { by: 'offsets' };
      } else {
        const { from, to } = request;
        if (!from || !to || Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) {
          throw new ReplayWindowError('give two times (from, to) or offsets per partition');
        }
        if (from.getTime() >= to.getTime()) throw new ReplayWindowError('the start is not before the end');
        asked = await backend.windowByTime(request.topic, from, to, watermarks);
        window = { by: 'time', from: from.toISOString(), to: to.toISOString() };
      }
      const { partitions, records } = checkWindows(request.topic, asked, watermarks);
      const plan = sealReplayPlan({
        version: 2,
        kind: 'replay',
        transport: this.options.broker.kind,
        plannedBy: actor,
        source: request.topic,
        target: backend.targetOf(request.topic, request.group),
        ...backend.planFields(request.topic),
        group: request.group,
        createdAt: new Date(this.clock.now()).toISOString(),
        window,
        partitions,
        records,
        inbox: request.inbox,
        ratePerSecond,
        replayId: uuidv7(),
      });
      await this.options.ledger.record({
        ...this.fields('PLAN', plan, actor),
        outcome: 'PLANNED',
        detail: replayDetail(plan),
      });
      return plan;
    });
  }

  /**
   * Checks the plan and its approval as a redrive's are checked (`verifyApprovedPlan`: the PLAN entry, the
   * pinned keyring and topology, the signature and validity, four eyes between planner, approver, executor
   * and the credential's owner); the only way to an `ApprovedReplayPlan`.
   */
  async approve(
    plan: ReplayPlan,
    approval: RedriveApproval | undefined,
    executedBy: string = this.credential.principal,
  ): Promise<ApprovedReplayPlan> {
    const base = { ...this.fields('EXECUTE', plan, executedBy), approver: approval?.approver };
    return this.audit.refusalsOf(base, async () => {
      if (!approval) throw new ApprovalRequiredError('the replay plan has no approval');
      this.checkShape(plan);
      await this.verify(plan, approval, executedBy);
      const approved: ApprovedReplayPlan = Object.freeze({ plan, approval });
      this.approved.set(approved, executedBy);
      return approved;
    });
  }

  /**
   * Runs an approved replay plan: claims the approval (it runs once) with a STARTED entry, holds the topic
   * for the group exclusively across processes, publishes the copies at the plan's rate, and records a
   * REPLAYED (or INCOMPLETE) entry. Running the same plan again under a new approval, after a crash say,
   * publishes the window again with the same replay id: the inbox drops what the first run applied.
   */
  async execute(approved: ApprovedReplayPlan): Promise<ReplayResult> {
    const executedBy = this.approved.get(approved);
    if (executedBy === undefined) {
      return this.audit.refusalsOf({ action: 'EXECUTE' }, () => {
        throw new ApprovalRequiredError(
          'this replay plan was not approved by this ReplayService, or already ran',
        );
      });
    }
    this.approved.delete(approved);
    const { plan, approval } = approved;
    const executionId = uuidv7();
    const base: Omit<RedriveAuditEntry, 'outcome'> = {
      ...this.fields('EXECUTE', plan, executedBy),
      approver: approval.approver,
      redriveId: executionId,
      evidence: approvalEvidence(approval, this.approvers),
    };
    return this.audit.refusalsOf(base, async () => {
      this.checkShape(plan);
      await this.verify(plan, approval, executedBy);
      const { ledger } = this.options;
      const partitions = await ledger.withExclusiveHold(
        plan.transport,
        `replay:${plan.source}:${plan.group}`,
        async () => {
          const use = await ledger.claimApproval(
            {
              nonce: approval.nonce,
              planHash: plan.hash,
              approver: approval.approver,
              redriveId: executionId,
              executedBy,
            },
            { ...base, outcome: 'STARTED', detail: replayDetail(plan) },
          );
          if (!use.claimed) throw new ApprovalAlreadyUsedError(approval.approver, use.usedBy);
          const to = { target: plan.target, group: plan.group, inbox: plan.inbox, replayId: plan.replayId };
          const pacer = new ReplayPacer(plan.ratePerSecond, this.options.pacing ?? systemClock);
          return this.backend().replay(plan, (record) => replayCopy(record, to), pacer);
        },
      );
      const published = partitions.reduce((n, p) => n + p.published, 0);
      const skipped = partitions.reduce((n, p) => n + p.skipped, 0);
      const stopped = partitions.filter((p) => p.error !== undefined);
      await ledger.record({
        ...base,
        outcome: stopped.length > 0 ? 'INCOMPLETE' : 'REPLAYED',
        detail:
          `replay ${plan.replayId}: ${published} published to group ${plan.group}, ${skipped} skipped` +
          stopped.map((p) => `; partition ${p.partition} stopped at ${p.next}: ${p.error}`).join(''),
      });
      return {
        replayId: plan.replayId,
        executionId,
        source: plan.source,
        group: plan.group,
        published,
        skipped,
        complete: stopped.length === 0,
        partitions,
      };
    });
  }

  /** Closes the broker connections (not the ledger, which the caller owns). */
  async close(): Promise<void> {
    const backend = this.backendInstance;
    this.backendInstance = undefined;
    await backend?.close();
  }

  private get approvers(): ApproverKeyring {
    return this.options.approvers ?? ApproverKeyring.empty();
  }

  /** The audit fields of an operation on a replay plan. */
  private fields(
    action: RedriveAuditEntry['action'],
    plan: ReplayPlan,
    actor: string,
  ): Omit<RedriveAuditEntry, 'outcome'> {
    return {
      action,
      actor,
      transport: plan.transport,
      source: plan.source,
      target: plan.target,
      planHash: plan.hash,
      ...(this.skippedChecks.length > 0 ? { overrides: this.skippedChecks } : {}),
    };
  }

  /** Refuses a plan made on another broker, one that is not a replay plan, or one whose copies go elsewhere. */
  private checkShape(plan: ReplayPlan): void {
    if (plan.kind !== 'replay') throw new RedrivePlanStaleError(plan.source, 'it is not a replay plan');
    if (plan.target !== replayTargetOf(plan)) {
      throw new RedrivePlanStaleError(plan.source, `its copies go to '${plan.target}', not the group's`);
    }
    if (plan.transport !== this.options.broker.kind) {
      throw new RedrivePlanStaleError(
        plan.source,
        `the plan was made on ${plan.transport}, not ${this.options.broker.kind}`,
      );
    }
  }

  private async verify(plan: ReplayPlan, approval: RedriveApproval, executedBy: string): Promise<void> {
    await verifyApprovedPlan(plan, approval, executedBy, {
      ledger: this.options.ledger,
      topology: this.options.topology,
      approvers: this.approvers,
      principal: this.credential.principal,
      requireIdentityMap: !isLocalDevelopment(this.options.broker),
      now: new Date(this.clock.now()),
    });
  }

  /** The broker's replay: Kafka's reads the topic, RabbitMQ's the destination's journal. */
  private backend(): ReplayBackend {
    const { broker } = this.options;
    if (!this.backendInstance) {
      if (broker.kind === 'rabbitmq') {
        assertPeerInstalled('amqplib', 'Replay on RabbitMQ');
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for RabbitMQ (an optional peer)
        const { RabbitReplay } = require('./rabbit-replay') as typeof RabbitReplayModule;
        this.backendInstance = new RabbitReplay(broker.url, this.credential);
      } else {
        assertPeerInstalled('kafkajs', 'Replay on Kafka');
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for Kafka (an optional peer)
        const { KafkaReplay } = require('./kafka-replay') as typeof KafkaReplayModule;
        this.backendInstance = new KafkaReplay(broker, this.credential);
      }
    }
    return this.backendInstance;
  }
}
