import { v7 as uuidv7 } from 'uuid';
import { Clock, systemClock } from '../common/clock';
import { MessagingTopology } from '../topology/messaging-topology';
import { AdminCredential, checkAdminConnection } from './admin-connection';
import { ApprovedRedrivePlan, brandApproved } from './approved-redrive-plan';
import { ApproverKeyring } from './approvals/approver-keyring';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import { createDeadLetterBackend } from './dead-letter-backends';
import { DeadLetterBrowse, DeadLetterReader } from './dead-letter-reader';
import { DeadLetterQuery } from './dead-letter-search';
import { ApprovalRequiredError } from './errors/approval-required.error';
import { InspectedDeadLetter, InspectedDeadLetterWithPayload } from './inspected-dead-letter';
import { AuditOverride } from './ledger/redrive-ledger.interface';
import { checkPlanShape, verifyApprovedPlan } from './plan-verification';
import { approvalEvidence, RedriveApproval } from './redrive-approval';
import { RedriveAudit } from './redrive-audit';
import { runExecution } from './redrive-executor';
import { isLocalDevelopment, requireCredential } from './redrive-guards';
import { ReadBudget } from './read-budget';
import { RedriveLimits } from './redrive-limits';
import { MessagePosition, RedrivePlan } from './redrive-plan';
import { checkPinnedTopology } from './pinned-fingerprints';
import { buildPlan } from './redrive-planner';
import { buildEditPlan } from './edit/edit-planner';
import { MessageEditRequest } from './edit/message-edit';
import { DeadLetterQueueInfo, RedriveResult } from './redrive-result';
import { RedrivePlanRequest, RedriveServiceOptions } from './redrive-service-options';
import { ReplayService } from './replay/replay.service';
import { BulkPlanStore } from './bulk/bulk-plan-store';
import { BulkPlanRequest, buildBulkPlan } from './bulk/bulk-planner';
import { BulkExecutionOptions, BulkRedriveResult, runBulkExecution } from './bulk/bulk-executor';
import { RedrivePlanKindError } from './errors/redrive-plan-kind.error';

export type { RedrivePlanRequest, RedriveServiceOptions } from './redrive-service-options';
export type { EditChange, MessageEditRequest, PlanEdit } from './edit/message-edit';

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
  private readonly audit: RedriveAudit;
  private readonly skipped: readonly AuditOverride[];
  /** The approved plans this service issued, with the person who may execute each. */
  private readonly approved = new WeakMap<ApprovedRedrivePlan, string>();
  private backendInstance?: DeadLetterBackend;

  constructor(private readonly options: RedriveServiceOptions) {
    const { broker } = options;
    const noPassword = broker.kind === 'kafka' && !broker.sasl && isLocalDevelopment(broker);
    this.credential = requireCredential(options.credential, noPassword);
    // A cleartext connection let through by `allowInsecureTransport` is recorded (issue 45, finding 11).
    this.skipped = checkAdminConnection(broker) ? ['insecure-transport'] : [];
    this.clock = options.clock ?? systemClock;
    if (options.readBudgetBytes !== undefined) new ReadBudget(options.readBudgetBytes); // a RangeError now, not at the first read
    this.audit = new RedriveAudit(options.ledger, broker.kind, this.credential.principal, this.skipped);
  }

  /**
   * The safety checks this service's broker connection skipped (`insecure-transport`: in clear text to a
   * host not on this machine), which every audit entry it writes carries; empty for none.
   */
  get overrides(): readonly AuditOverride[] {
    return this.skipped;
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
   * Reads up to `limit` (at most 100) messages from the head of `source` with their headers, within the
   * read's byte budget (`readBudgetBytes`); settles nothing, publishes nothing, records nothing.
   * `inspectHead` also says what the budget left unread.
   */
  inspect(source: string, limit: number = RedriveLimits.MAX_BATCH): Promise<InspectedDeadLetter[]> {
    return this.reader().inspect(source, limit);
  }

  /** `inspect` with the depth and what the byte budget left unread (`cutOff`): the console's dead-letter view. */
  inspectHead(source: string, limit: number = RedriveLimits.MAX_BATCH): Promise<DeadLetterBrowse> {
    return this.reader().inspectHead(source, limit);
  }

  /**
   * Every message of `source` a plan can reach (the first `RedriveLimits.MAX_SCAN` from the head, within
   * the byte budget, `cutOff` saying what it left), with headers, without payloads; settles nothing,
   * records nothing: the console's paged and grouped views.
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

  /** `search` with the depth and what the byte budget left unsearched (`cutOff`). */
  searchHead(source: string, query: DeadLetterQuery): Promise<DeadLetterBrowse> {
    return this.reader().searchHead(source, query);
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

  /**
   * A dry run: reads up to `limit` messages from the head of the source, settles nothing, publishes nothing.
   * Refused when the admin database pins another topology than this service's (`TOPOLOGY_NOT_PINNED`).
   */
  async plan(request: RedrivePlanRequest): Promise<RedrivePlan> {
    const actor = request.plannedBy ?? this.credential.principal;
    const about = { action: 'PLAN' as const, actor, source: request.source, target: request.target };
    return this.audit.refusalsOf(about, async () => {
      const { topology, keySecret } = this.options;
      await checkPinnedTopology(this.options.ledger, topology);
      const maxBytes = this.options.readBudgetBytes;
      const context = {
        backend: this.backend(),
        topology,
        keySecret,
        actor,
        now: this.clock.now(),
        maxBytes,
      };
      const plan = await buildPlan(request, context);
      await this.audit.planned(plan, actor);
      return plan;
    });
  }

  /**
   * A dry run at scale (docs/guide/08-redrive.md, "Incidents at scale"): scans the whole source a page at a
   * time, settling nothing, keeps the selected messages in order in the plan store (`bulkStore`) and returns
   * a plan that lists none of them but signs their count and digest: one plan, one approval, for a group of
   * any size. Approve it with `approve()`, run it with `executeBulk()`.
   */
  async planBulk(request: BulkPlanRequest): Promise<RedrivePlan> {
    const actor = request.plannedBy ?? this.credential.principal;
    const about = { action: 'PLAN' as const, actor, source: request.source, target: request.target };
    return this.audit.refusalsOf(about, async () => {
      const { topology, keySecret } = this.options;
      await checkPinnedTopology(this.options.ledger, topology);
      const context = { backend: this.backend(), topology, keySecret, actor, now: this.clock.now() };
      const plan = await buildBulkPlan(request, context, this.bulkStore(), uuidv7());
      await this.audit.planned(plan, actor);
      return plan;
    });
  }

  /**
   * Plans an edit of one dead letter (docs/guide/08-redrive.md, Edit and retry): reads it (settling nothing),
   * refuses locked headers, a payload that is not JSON or that the event's schema refuses (`events`), and
   * returns a plan of action `edit` carrying the edited payload and its diff, recorded in the audit log
   * (PLAN, with the diff's hash). It is approved and executed like any plan: the approver signs the plan's
   * hash, which covers the diff; executing publishes the edited copy under the same message id with
   * `msg.edit-of`, archives the original, and claims the dead letter so that it is edited once.
   */
  async planEdit(request: MessageEditRequest): Promise<RedrivePlan> {
    const actor = request.plannedBy ?? this.credential.principal;
    const about = { action: 'PLAN' as const, actor, source: request.source, messageIds: [request.messageId] };
    return this.audit.refusalsOf(about, async () => {
      const { topology, keySecret, events, carryHeaders, readBudgetBytes } = this.options;
      await checkPinnedTopology(this.options.ledger, topology);
      const plan = await buildEditPlan(request, {
        backend: this.backend(),
        topology,
        keySecret,
        events: events ?? [],
        carryHeaders: carryHeaders ?? [],
        actor,
        now: this.clock.now(),
        maxBytes: readBudgetBytes,
      });
      await this.audit.planned(plan, actor);
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
    return this.audit.refusalsOf(this.audit.entry('EXECUTE', plan, approval, executedBy), async () => {
      if (!approval) throw new ApprovalRequiredError('the plan has no approval');
      checkPlanShape(plan, this.transport);
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
   * and records the approval as used first, with a STARTED entry in the same transaction: an approval runs
   * once, and never without a trace in the audit log.
   */
  async execute(approvedPlan: ApprovedRedrivePlan): Promise<RedriveResult> {
    const executedBy = this.approved.get(approvedPlan);
    if (executedBy === undefined) {
      return this.audit.refusalsOf({ action: 'EXECUTE' }, () => {
        throw new ApprovalRequiredError('this plan was not approved by this RedriveService, or already ran');
      });
    }
    this.approved.delete(approvedPlan);
    const { plan, approval } = approvedPlan;
    const redriveId = uuidv7();
    const base = {
      ...this.audit.entry('EXECUTE', plan, approval, executedBy),
      redriveId,
      evidence: approvalEvidence(approval, this.approvers),
    };
    return this.audit.refusalsOf(base, async () => {
      checkPlanShape(plan, this.transport);
      if (plan.bulk) throw new RedrivePlanKindError(plan.source, true);
      await this.verify(plan, approval, executedBy);
      const { ledger, topology, keySecret, carryHeaders, metrics } = this.options;
      const context = { backend: this.backend(), ledger, topology, keySecret, carryHeaders, metrics };
      const result = await runExecution(context, { plan, approval, executedBy, redriveId, audit: base });
      await this.audit.executed(base, result, plan);
      return result;
    });
  }

  /**
   * Replay of a Kafka topic's window to one group, on this service's broker, credential, ledger, keyring and
   * topology (docs/guide/08-redrive.md, Replay a window). The caller closes it.
   */
  replays(): ReplayService {
    return new ReplayService(this.options);
  }

  /**
   * Runs an approved plan at scale (`planBulk()`), with the checks and guarantees of `execute()`: the same
   * verification and four eyes, the source held exclusively, the approval claimed once with a STARTED entry,
   * each message read again and checked against its description before its copy is published, and settled
   * only once confirmed. It moves a chunk of at most 100 at a time, records each in the plan store and the
   * audit log (PROGRESS, with the chunk's ids) and reports it to `onProgress`. After a crash, run the same
   * plan again with the same approval (or a new one): it continues the same redrive id from the plan
   * store, settling first what the crash left in flight; nothing is lost, and a message whose copy was
   * confirmed but not yet settled is sent again, a duplicate the inbox absorbs by its `msg.id`.
   */
  async executeBulk(
    approvedPlan: ApprovedRedrivePlan,
    options: BulkExecutionOptions = {},
  ): Promise<BulkRedriveResult> {
    const executedBy = this.approved.get(approvedPlan);
    if (executedBy === undefined) {
      return this.audit.refusalsOf({ action: 'EXECUTE' }, () => {
        throw new ApprovalRequiredError('this plan was not approved by this RedriveService, or already ran');
      });
    }
    this.approved.delete(approvedPlan);
    const { plan, approval } = approvedPlan;
    const base = {
      ...this.audit.entry('EXECUTE', plan, approval, executedBy),
      evidence: approvalEvidence(approval, this.approvers),
    };
    return this.audit.refusalsOf(base, async () => {
      checkPlanShape(plan, this.transport);
      if (!plan.bulk) throw new RedrivePlanKindError(plan.source, false);
      await this.verify(plan, approval, executedBy);
      const { ledger, topology, keySecret, carryHeaders, metrics } = this.options;
      const context = {
        backend: this.backend(),
        ledger,
        topology,
        keySecret,
        carryHeaders,
        metrics,
        store: this.bulkStore(),
      };
      const execution = { plan, approval, executedBy, redriveId: uuidv7(), audit: base };
      const result = await runBulkExecution(context, execution, options);
      const discard = plan.action === 'discard';
      await this.options.ledger.record({
        ...base,
        redriveId: result.redriveId,
        messageIds: [],
        outcome: result.leftInSource > 0 ? 'INCOMPLETE' : discard ? 'ARCHIVED' : 'REDRIVEN',
        detail:
          `plan at scale: ${result.redriven} of ${plan.bulk.taken} ${discard ? 'archived' : 'redriven'} ` +
          `(${result.movedNow} by this run), ${result.leftInSource} left in the source` +
          (result.stoppedBy ? `; stopped: ${result.stoppedBy}` : ''),
      });
      if (result.movedNow > 0 && !discard) {
        metrics?.redriven.inc({ source: plan.source, target: plan.target }, result.movedNow);
      }
      return result;
    });
  }

  /** Closes the broker connections (not the ledger, which the caller owns). */
  async close(): Promise<void> {
    const backend = this.backendInstance;
    this.backendInstance = undefined;
    await backend?.close();
  }

  /** Checks the plan, its approval and four eyes (`verifyApprovedPlan`), now. */
  private async verify(plan: RedrivePlan, approval: RedriveApproval, executedBy: string): Promise<void> {
    await verifyApprovedPlan(plan, approval, executedBy, {
      ledger: this.options.ledger,
      topology: this.options.topology,
      approvers: this.approvers,
      principal: this.credential.principal,
      requireIdentityMap: !isLocalDevelopment(this.options.broker),
      now: new Date(this.clock.now()),
    });
  }

  private reader(): DeadLetterReader {
    const { topology, keySecret, readBudgetBytes } = this.options;
    return new DeadLetterReader(this.backend(), topology, keySecret, readBudgetBytes);
  }

  private bulkStore(): BulkPlanStore {
    const store = this.options.bulkStore;
    if (!store) throw new Error('Plans at scale need a plan store: give RedriveServiceOptions.bulkStore');
    return store;
  }

  private backend(): DeadLetterBackend {
    this.backendInstance ??= createDeadLetterBackend(this.options.broker, this.credential);
    return this.backendInstance;
  }
}
