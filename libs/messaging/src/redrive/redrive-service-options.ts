import { MessagingMetrics } from '../observability/messaging-metrics';
import { KeySecret } from '../failure/key-secret';
import { MessagingTopology } from '../topology/messaging-topology';
import { Clock } from '../common/clock';
import { EventDefinition } from '../envelope/event-definition';
import { AdminCredential, RedriveBroker } from './admin-connection';
import { ApproverKeyring } from './approvals/approver-keyring';
import { RedriveLedger } from './ledger/redrive-ledger.interface';
import { PlanAction, PlanSelection } from './plan-selection';
import type { BulkPlanStore } from './bulk/bulk-plan-store';

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
  /**
   * Header names a redriven copy keeps besides the library's own: the services' `deadLetter.carryHeaders`
   * (compared without case). Every other header of a dead-letter record is dropped. Default: none.
   */
  readonly carryHeaders?: readonly string[];
  /** Where to count redriven messages (`messaging_redriven_total`). Default: not counted. */
  readonly metrics?: Pick<MessagingMetrics, 'redriven'>;
  /**
   * Bytes one read of dead letters holds at most (a page, a search, a plan's read), bodies, keys and headers
   * together: the read stops there and says how many it did not read (`cutOff`). A DLQ any service can
   * publish into then cannot fill the console's or the CLI's memory. Default `RedriveLimits.READ_BUDGET_BYTES`
   * (16 MiB).
   */
  readonly readBudgetBytes?: number;
  /**
   * Where plans at scale keep their items and progress (`PostgresBulkPlanStore` on the admin database):
   * needed by `planBulk()` and `executeBulk()` only. The caller owns it (closes it).
   */
  readonly bulkStore?: BulkPlanStore;
  /**
   * The event definitions (`defineEvent()`) an edited payload is checked against, by `msg.type` and
   * `msg.event-version` (`planEdit()`). An edit of a message whose definition is not among them is refused
   * unless the editor plans it unvalidated (`MessageEditRequest.withoutSchema`). Default: none.
   */
  readonly events?: readonly EventDefinition[];
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
   * that must never run (the same approval, execution and audit). An edit is planned with `planEdit()`.
   */
  readonly action?: Exclude<PlanAction, 'edit'>;
  /**
   * The person planning, when a front end serves several people with one admin credential (the console):
   * the plan's `plannedBy`, who may not approve it. Default: the admin credential's principal.
   */
  readonly plannedBy?: string;
}
