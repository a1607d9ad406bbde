import { v7 as uuidv7 } from 'uuid';
import { MessagingMetrics } from '../../observability/messaging-metrics';
import { AdminCredential, RedriveBroker } from './admin-connection';
import { ApprovedRedrivePlan, brandApproved } from './approved-redrive-plan';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import { createDeadLetterBackend } from './dead-letter-backends';
import { describeRecord } from './dead-letter-record';
import { ApprovalRequiredError } from './errors/approval-required.error';
import { RedrivePlanStaleError } from './errors/redrive-plan-stale.error';
import { RedriveTargetNotFoundError } from './errors/redrive-target-not-found.error';
import { ApprovalGrant, RedriveApproval, signApproval, verifyApproval } from './redrive-approval';
import { checkBatchSize, checkDistinctTarget, checkPlannedCount, requireCredential } from './redrive-guards';
import { redriveCopy } from './redrive-headers';
import { RedriveLimits } from './redrive-limits';
import { RedrivePlan, sealPlan } from './redrive-plan';
import { DeadLetterQueueInfo, MessageRedriveOutcome, RedriveResult } from './redrive-result';

/** What a `RedriveService` is built with. */
export interface RedriveServiceOptions {
  /** The broker, reached as the admin. */
  readonly broker: RedriveBroker;
  /** The admin credential; without one every operation is refused (`MissingAdminCredentialError`). */
  readonly credential: AdminCredential | undefined;
  /** Where to count redriven messages (`messaging_redriven_total`). Default: not counted. */
  readonly metrics?: Pick<MessagingMetrics, 'redriven'>;
  /** The clock approvals are checked against. Default: the system clock. */
  readonly clock?: () => Date;
}

/** What a dry run is asked for. */
export interface RedrivePlanRequest {
  /** The dead-letter destination, `<destination>.<group>.dlq`. */
  readonly source: string;
  /** Where to move the messages. Default: RabbitMQ, the group's work queue; Kafka, their origin topic. */
  readonly target?: string;
  /** At most this many messages, from the head. Default and maximum 100. */
  readonly limit?: number;
}

/**
 * Redrive, an admin operation (spec §3): `plan()` is a dry run that changes nothing; `issueApproval()` lets
 * an approver sign a plan for a limited time; `approve()` checks plan and approval and is the only source
 * of an `ApprovedRedrivePlan`; `execute()` moves exactly the planned messages, publish → confirm → settle.
 * Plain class, no Nest DI: the CLI builds one; the application runtime never holds its credential.
 */
export class RedriveService {
  private readonly credential: AdminCredential;
  private readonly clock: () => Date;
  private readonly approved = new WeakSet<ApprovedRedrivePlan>();
  private backendInstance?: DeadLetterBackend;

  constructor(private readonly options: RedriveServiceOptions) {
    this.credential = requireCredential(options.credential);
    this.clock = options.clock ?? (() => new Date());
  }

  /** Dead-letter destinations and their depths. RabbitMQ cannot list queues over AMQP: name them. */
  list(names: readonly string[] = []): Promise<DeadLetterQueueInfo[]> {
    return this.backend().list(names);
  }

  /** A dry run: reads up to `limit` messages from the head of the source, settles nothing, publishes nothing. */
  async plan(request: RedrivePlanRequest): Promise<RedrivePlan> {
    const limit = request.limit ?? RedriveLimits.MAX_BATCH;
    checkBatchSize(limit);
    if (request.target !== undefined) checkDistinctTarget(request.source, request.target);
    const backend = this.backend();
    const { records, depth } = await backend.peek(request.source, limit);
    const target = request.target ?? backend.defaultTarget(request.source, records);
    if (target === undefined && records.length > 0)
      throw new RedriveTargetNotFoundError(request.source, undefined);
    if (target !== undefined) {
      checkDistinctTarget(request.source, target);
      await backend.checkTarget(request.source, target);
    }
    return sealPlan({
      version: 1,
      transport: backend.kind,
      source: request.source,
      target: target ?? '',
      createdAt: this.clock().toISOString(),
      depth,
      messages: records.map(describeRecord),
    });
  }

  /** Signs an approval of `plan` by `grant.approver`, valid for `grant.ttlMs` (default 15 minutes). */
  issueApproval(plan: RedrivePlan, grant: ApprovalGrant): RedriveApproval {
    this.checkPlan(plan);
    return signApproval(plan, grant, this.credential, this.clock());
  }

  /** Checks that `approval` approves this very plan, now; the only way to get an `ApprovedRedrivePlan`. */
  approve(plan: RedrivePlan, approval: RedriveApproval | undefined): ApprovedRedrivePlan {
    if (!approval) throw new ApprovalRequiredError('the plan has no approval');
    this.checkPlan(plan);
    verifyApproval(plan, approval, this.credential, this.clock());
    const approvedPlan = brandApproved(plan, approval);
    this.approved.add(approvedPlan);
    return approvedPlan;
  }

  /**
   * Moves the planned messages to the target, each with a new `msg.redrive-id` and without failure headers,
   * and settles in the source only those the target confirmed. Each approved plan runs at most once.
   */
  async execute(approvedPlan: ApprovedRedrivePlan): Promise<RedriveResult> {
    if (!this.approved.has(approvedPlan)) {
      throw new ApprovalRequiredError('this plan was not approved by this RedriveService, or already ran');
    }
    this.approved.delete(approvedPlan);
    const { plan, approval } = approvedPlan;
    this.checkPlan(plan);
    verifyApproval(plan, approval, this.credential, this.clock());
    const redriveId = uuidv7();
    const messages = plan.messages.length === 0 ? [] : await this.move(plan, redriveId);
    const redriven = messages.filter((m) => m.status === 'REDRIVEN').length;
    if (redriven > 0)
      this.options.metrics?.redriven.inc({ source: plan.source, target: plan.target }, redriven);
    const { source, target } = plan;
    return { redriveId, source, target, redriven, leftInSource: messages.length - redriven, messages };
  }

  /** Closes the broker connections. */
  async close(): Promise<void> {
    const backend = this.backendInstance;
    this.backendInstance = undefined;
    await backend?.close();
  }

  private async move(plan: RedrivePlan, redriveId: string): Promise<MessageRedriveOutcome[]> {
    const backend = this.backend();
    await backend.checkTarget(plan.source, plan.target);
    return backend.move(plan, (record) => redriveCopy(record.wire, plan.target, redriveId));
  }

  private checkPlan(plan: RedrivePlan): void {
    checkPlannedCount(plan.messages.length);
    if (plan.messages.length > 0) checkDistinctTarget(plan.source, plan.target);
    if (plan.transport !== this.options.broker.kind) {
      throw new RedrivePlanStaleError(
        plan.source,
        `the plan was made on ${plan.transport}, not ${this.options.broker.kind}`,
      );
    }
  }

  private backend(): DeadLetterBackend {
    this.backendInstance ??= createDeadLetterBackend(this.options.broker, this.credential);
    return this.backendInstance;
  }
}
