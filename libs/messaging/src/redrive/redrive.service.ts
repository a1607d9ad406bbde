import { v7 as uuidv7 } from 'uuid';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { KeySecret } from '../failure/key-secret';
import { MessagingTopology } from '../topology/messaging-topology';
import { AdminCredential, checkAdminConnection, RedriveBroker } from './admin-connection';
import { ApprovedRedrivePlan, brandApproved } from './approved-redrive-plan';
import { describeRecord } from './dead-letter-record';
import { ApproverKeyring } from './approvals/approver-keyring';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import { createDeadLetterBackend } from './dead-letter-backends';
import { checkFourEyes } from './approvals/four-eyes';
import { ApprovalAlreadyUsedError } from './errors/approval-already-used.error';
import { ApprovalRequiredError } from './errors/approval-required.error';
import { RedrivePlanStaleError } from './errors/redrive-plan-stale.error';
import { RedriveRefusedError } from './errors/redrive-refused.error';
import { RedriveTargetRefusedError } from './errors/redrive-target-refused.error';
import { RedriveAuditEntry, RedriveLedger } from './ledger/redrive-ledger.interface';
import { RedriveApproval, verifyApproval } from './redrive-approval';
import { reviewPlan } from './plan-review';
import {
  checkBatchSize,
  checkDistinctTarget,
  checkPlannedCount,
  isLocalDevelopment,
  requireCredential,
} from './redrive-guards';
import { redriveCopy } from './redrive-headers';
import { InspectedDeadLetter, InspectedDeadLetterWithPayload } from './inspected-dead-letter';
import { RedriveLimits } from './redrive-limits';
import { MessagePosition, RedrivePlan, sealPlan } from './redrive-plan';
import { DeadLetterQueueInfo, RedriveResult } from './redrive-result';
import { checkRecords, checkTarget, deriveRoute } from './redrive-route';
import { restoreKey } from './restore-key';
import { Clock, systemClock } from '../common/clock';
import { archiveCopy, archiveOf } from './dead-letter-archive';
import { planDetail, readPlanContents } from './plan-contents';
import { DeadLetterQuery } from './dead-letter-search';
import { DeadLetterBrowse, DeadLetterReader } from './dead-letter-reader';
import { PlanAction, PlanSelection } from './plan-selection';

/** What a `RedriveService` is built with. */
export interface RedriveServiceOptions {
  /** The broker, reached as the admin (Kafka: with SASL, see `checkAdminConnection`). */
  readonly broker: RedriveBroker;
  /** The admin credential; without one every operation is refused (`MissingAdminCredentialError`). */
  readonly credential: AdminCredential | undefined;
  /**
   * The reviewed keyring: the approvers whose approvals `approve()` accepts, and (version 2) the identity
   * map four eyes counts people by. Without an identity map every approval is refused, except in local
   * development (`broker.allowPlaintextLocal`). Default: nobody (plan and list only).
   */
  readonly approvers?: ApproverKeyring;
  /**
   * The topology (`topology.json`): a dead-letter destination's route comes from its group there. Needed
   * for a DLQ whose name reads two ways (dots in the names, `AmbiguousRedriveRouteError`). Default: the
   * route comes from the name alone.
   */
  readonly topology?: MessagingTopology;
  /** The admin database: audit log, used approvals, exclusive holds (`PostgresRedriveLedger`). */
  readonly ledger: RedriveLedger;
  /** The services' key secret, which restores each message's real key. Required for messages with a key. */
  readonly keySecret?: KeySecret;
  /** Where to count redriven messages (`messaging_redriven_total`). Default: not counted. */
  readonly metrics?: Pick<MessagingMetrics, 'redriven'>;
  /** The clock plans are dated and approvals checked by (the library's one `Clock`; only `now` is read). Default: the system clock. */
  readonly clock?: Pick<Clock, 'now'>;
}

/** What a dry run is asked for. */
export interface RedrivePlanRequest {
  /** The dead-letter destination, `<destination>.<group>.dlq`. */
  readonly source: string;
  /**
   * Where to move the messages: derived from the source (Kafka, the destination topic; RabbitMQ, the
   * group's work queue). When given, it must be that one (`RedriveTargetRefusedError` otherwise).
   */
  readonly target?: string;
  /** At most this many messages, from the head. Default and maximum 100. */
  readonly limit?: number;
  /**
   * Which messages: by id, or by a filter (a group is a filter on category and code), looking at most
   * `RedriveLimits.MAX_SCAN` messages deep; at most `limit` are taken. Default: the first `limit` from the head.
   */
  readonly selection?: PlanSelection;
  /**
   * `redrive` (default) moves the messages back; `discard` archives them in `<source>.archive` for messages
   * that must never run (the same approval, execution and audit).
   */
  readonly action?: PlanAction;
  /**
   * The person planning, when a front end serves several people with one admin credential (the console):
   * the plan's `plannedBy`, who may not approve it. Default: the admin credential's principal.
   */
  readonly plannedBy?: string;
}

/**
 * Redrive, an admin operation (docs/guide/08-redrive.md): `plan()` is a dry run that changes nothing; an approver signs a
 * plan with their own key (`signApproval`); `approve()` checks plan and approval and is the only source of an
 * `ApprovedRedrivePlan`; `execute()` moves exactly the planned messages, publish → confirm → settle, once
 * per approval and never beside another redrive of the same DLQ. Every plan, execution and refusal goes to
 * the ledger's audit log. Plain class, no Nest DI: the CLI builds one; the application runtime never holds
 * its credential.
 */
export class RedriveService {
  private readonly credential: AdminCredential;
  private readonly clock: Pick<Clock, 'now'>;
  /** The approved plans this service issued, with the person who may execute each. */
  private readonly approved = new WeakMap<ApprovedRedrivePlan, string>();
  private backendInstance?: DeadLetterBackend;

  constructor(private readonly options: RedriveServiceOptions) {
    const { broker } = options;
    const noPassword = broker.kind === 'kafka' && !broker.sasl && isLocalDevelopment(broker);
    this.credential = requireCredential(options.credential, noPassword);
    checkAdminConnection(broker);
    this.clock = options.clock ?? systemClock;
  }

  /** The broker this service works on. */
  get transport(): 'kafka' | 'rabbitmq' {
    return this.options.broker.kind;
  }

  /** The reviewed keyring the service checks approvals and four eyes with. */
  get approvers(): ApproverKeyring {
    return this.options.approvers ?? ApproverKeyring.empty();
  }

  /** The topology routes are derived with, if one was given. */
  get topology(): MessagingTopology | undefined {
    return this.options.topology;
  }

  /** Dead-letter destinations and their depths. RabbitMQ cannot list queues over AMQP: name them. */
  list(names: readonly string[] = []): Promise<DeadLetterQueueInfo[]> {
    return this.backend().list(names);
  }

  /**
   * Reads up to `limit` (at most 100) messages from the head of `source` with their headers and payload,
   * settles nothing, publishes nothing, records nothing: the console's dead-letter view.
   */
  inspect(source: string, limit: number = RedriveLimits.MAX_BATCH): Promise<InspectedDeadLetter[]> {
    return this.reader().inspect(source, limit);
  }

  /**
   * Every message of `source` a plan can reach (the first `RedriveLimits.MAX_SCAN` from the head), with
   * headers, without payloads; settles nothing, records nothing: the console's paged and grouped views.
   */
  browse(source: string): Promise<DeadLetterBrowse> {
    return this.reader().browse(source);
  }

  /**
   * The messages of `source` (the first `RedriveLimits.MAX_SCAN`) with this message id and/or this real key,
   * compared through its pseudonym with the key secret; settles nothing, records nothing.
   */
  search(source: string, query: DeadLetterQuery): Promise<InspectedDeadLetter[]> {
    return this.reader().search(source, query);
  }

  /**
   * The first `limit` (at most 100) messages discarded from `source` (its archive, `<source>.archive`), with
   * headers, without payloads; empty when nothing was discarded yet.
   */
  inspectArchive(source: string, limit: number = RedriveLimits.MAX_BATCH): Promise<DeadLetterBrowse> {
    return this.reader().inspectArchive(source, limit);
  }

  /**
   * The message at `position` of `source` if it is still the one with `messageId`, with the first
   * `maxBytes` of its body (default 64 KiB): one message read (RabbitMQ: up to it from the head), nothing
   * settled, nothing recorded. Undefined when another message (or none) is there now.
   */
  inspectMessage(
    source: string,
    position: MessagePosition,
    messageId: string | null,
    maxBytes = 64 * 1024,
  ): Promise<InspectedDeadLetterWithPayload | undefined> {
    return this.reader().inspectMessage(source, position, messageId, maxBytes);
  }

  /** A dry run: reads up to `limit` messages from the head of the source, settles nothing, publishes nothing. */
  async plan(request: RedrivePlanRequest): Promise<RedrivePlan> {
    const actor = request.plannedBy ?? this.credential.principal;
    const about = { action: 'PLAN' as const, actor, source: request.source, target: request.target };
    return this.audited(about, async () => {
      const limit = request.limit ?? RedriveLimits.MAX_BATCH;
      checkBatchSize(limit);
      if (request.target !== undefined) {
        checkDistinctTarget(request.source, request.target);
        checkTarget(request.source, request.target);
      }
      const backend = this.backend();
      // The route, from the source's name and the topology, before anything is read.
      const route = deriveRoute(backend.kind, request.source, this.options.topology);
      if (request.target !== undefined && request.target !== route.target) {
        throw new RedriveTargetRefusedError(
          request.source,
          request.target,
          `its messages go back to '${route.target}' only`,
        );
      }
      const action = request.action ?? 'redrive';
      const { records, depth, extra } = await readPlanContents(backend, route, {
        source: request.source,
        limit,
        selection: request.selection,
        action,
        keySecret: this.options.keySecret,
        now: this.clock.now(),
      });
      const target = action === 'discard' ? archiveOf(request.source) : route.target;
      const plan = sealPlan({
        version: 2,
        transport: backend.kind,
        plannedBy: actor,
        source: request.source,
        target,
        group: route.group,
        createdAt: new Date(this.clock.now()).toISOString(),
        depth,
        messages: records.map(describeRecord),
        ...extra,
      });
      await this.options.ledger.record({
        ...this.entry('PLAN', plan, undefined, actor),
        outcome: 'PLANNED',
        detail: planDetail(plan),
      });
      return plan;
    });
  }

  /**
   * Checks that `plan` is the one `plan()` made (its route is the one its source derives, the audit log has
   * its PLAN entry, which names the planner) and that `approval` approves it, now, by an approver of the
   * keyring who is another person than the planner and the executor; the only way to get an
   * `ApprovedRedrivePlan`. The executor is `executedBy` (a console user acting through this service's
   * credential), by default the credential's principal.
   */
  async approve(
    plan: RedrivePlan,
    approval: RedriveApproval | undefined,
    executedBy: string = this.credential.principal,
  ): Promise<ApprovedRedrivePlan> {
    return this.audited(this.entry('EXECUTE', plan, approval, executedBy), async () => {
      if (!approval) throw new ApprovalRequiredError('the plan has no approval');
      this.checkPlan(plan);
      await this.verify(plan, approval, executedBy);
      const approvedPlan = brandApproved(plan, approval);
      this.approved.set(approvedPlan, executedBy);
      return approvedPlan;
    });
  }

  /**
   * Moves the planned messages back to the target under their real keys, each with a new `msg.redrive-id`,
   * the group it is for, and without failure headers; settles in the source only those the target
   * confirmed. Holds the source exclusively (across processes) from before reading it to the last settle,
   * and records the approval as used first: an approval runs once.
   */
  async execute(approvedPlan: ApprovedRedrivePlan): Promise<RedriveResult> {
    const executedBy = this.approved.get(approvedPlan);
    if (executedBy === undefined) {
      return this.audited({ action: 'EXECUTE' }, () => {
        throw new ApprovalRequiredError('this plan was not approved by this RedriveService, or already ran');
      });
    }
    this.approved.delete(approvedPlan);
    const { plan, approval } = approvedPlan;
    const redriveId = uuidv7();
    const base = { ...this.entry('EXECUTE', plan, approval, executedBy), redriveId };
    return this.audited(base, async () => {
      this.checkPlan(plan);
      await this.verify(plan, approval, executedBy);
      const { ledger } = this.options;
      const messages = await ledger.withExclusiveHold(plan.transport, plan.source, async () => {
        const use = await ledger.claimApproval({
          nonce: approval.nonce,
          planHash: plan.hash,
          approver: approval.approver,
          redriveId,
          executedBy,
        });
        if (!use.claimed) throw new ApprovalAlreadyUsedError(approval.approver, use.usedBy);
        return plan.messages.length === 0 ? [] : this.move(plan, redriveId);
      });
      const redriven = messages.filter((m) => m.status === 'REDRIVEN').length;
      const discard = plan.action === 'discard';
      if (redriven > 0 && !discard)
        this.options.metrics?.redriven.inc({ source: plan.source, target: plan.target }, redriven);
      const result: RedriveResult = {
        redriveId,
        source: plan.source,
        target: plan.target,
        ...(discard ? { action: 'discard' as const } : {}),
        redriven,
        leftInSource: messages.length - redriven,
        messages,
      };
      await ledger.record({
        ...base,
        messageIds: messages.filter((m) => m.status === 'REDRIVEN').map((m) => m.messageId),
        outcome: result.leftInSource > 0 ? 'INCOMPLETE' : discard ? 'ARCHIVED' : 'REDRIVEN',
        detail: `${redriven} ${discard ? `archived in ${plan.target}` : 'redriven'}, ${result.leftInSource} left in the source`,
      });
      return result;
    });
  }

  /** Closes the broker connections (not the ledger, which the caller owns). */
  async close(): Promise<void> {
    const backend = this.backendInstance;
    this.backendInstance = undefined;
    await backend?.close();
  }

  private async move(plan: RedrivePlan, redriveId: string) {
    const backend = this.backend();
    const route = deriveRoute(backend.kind, plan.source, this.options.topology);
    if (plan.action === 'discard') {
      // Archived as parked (pseudonymous key, failure headers): nothing of a discarded message runs again.
      await backend.ensureArchive(plan.source, plan.target);
      return backend.move(
        plan,
        (record) => archiveCopy(record.wire, plan.target, redriveId),
        () => undefined,
      );
    }
    await backend.checkTarget(plan.source, route.target);
    const to = { target: route.target, group: route.group };
    return backend.move(
      plan,
      (record) =>
        redriveCopy(record.wire, { ...to, key: restoreKey(record.wire, this.options.keySecret) }, redriveId),
      (records) => checkRecords(plan.source, route, records), // what is read again, before anything moves
    );
  }

  /**
   * The plan is the one `plan()` made (route, audit log), the approval is valid for it, and four eyes holds
   * between the planner the audit log names, the approver, the executor and the credential's owner.
   */
  private async verify(plan: RedrivePlan, approval: RedriveApproval, executedBy: string): Promise<void> {
    const planner = await reviewPlan(plan, this.options.ledger, this.options.topology);
    verifyApproval(plan, approval, this.approvers, new Date(this.clock.now()));
    checkFourEyes(
      this.approvers,
      { planner, approver: approval.approver, executor: executedBy, credential: this.credential.principal },
      !isLocalDevelopment(this.options.broker),
    );
  }

  private checkPlan(plan: RedrivePlan): void {
    checkPlannedCount(plan.messages.length);
    if (plan.messages.length > 0) {
      checkDistinctTarget(plan.source, plan.target);
      checkTarget(plan.source, plan.target);
    }
    if (plan.transport !== this.options.broker.kind) {
      throw new RedrivePlanStaleError(
        plan.source,
        `the plan was made on ${plan.transport}, not ${this.options.broker.kind}`,
      );
    }
  }

  /** The audit fields of an operation on `plan`. */
  private entry(
    action: RedriveAuditEntry['action'],
    plan: RedrivePlan,
    approval?: RedriveApproval,
    actor: string = this.credential.principal,
  ): Omit<RedriveAuditEntry, 'outcome'> {
    return {
      action,
      actor,
      transport: this.options.broker.kind,
      source: plan.source,
      target: plan.target || undefined,
      planHash: plan.hash,
      approver: approval?.approver,
      messageIds: plan.messages.map((m) => m.messageId),
    };
  }

  /** Runs `work`; a refusal is recorded in the audit log before it is rethrown. */
  private async audited<T>(
    base: Omit<RedriveAuditEntry, 'outcome' | 'actor' | 'transport'> & Partial<RedriveAuditEntry>,
    work: () => Promise<T> | never,
  ): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof RedriveRefusedError) {
        await this.options.ledger.record({
          actor: this.credential.principal,
          transport: this.options.broker.kind,
          ...base,
          action: 'REFUSE',
          outcome: error.guard,
          detail: `${base.action}: ${error.message}`,
        });
      }
      throw error;
    }
  }

  private reader(): DeadLetterReader {
    return new DeadLetterReader(this.backend(), this.options.topology, this.options.keySecret);
  }

  private backend(): DeadLetterBackend {
    this.backendInstance ??= createDeadLetterBackend(this.options.broker, this.credential);
    return this.backendInstance;
  }
}
