import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json';
import type { PlanEdit } from './edit/message-edit';
import { PlanAction, PlanSelection } from './plan-selection';
import { ReadCutOff } from './read-budget';
import type { BulkSelection } from './bulk/bulk-selection';
import type { PlannedMessage } from './planned-message';

export type { MessagePosition, PlannedMessage } from './planned-message';

/** A message a plan's selection took but leaves in the dead-letter destination, and why. */
export interface SkippedMessage {
  /** The message, as a plan shows it. */
  readonly message: PlannedMessage;
  /** Why it cannot be redriven, e.g. its origin is not the destination the DLQ is for. */
  readonly reason: string;
}

/**
 * The result of a dry run: what a redrive would move, from where to where. Plain data (it is written to a
 * file, read back, shown to the approver); `hash` covers everything else in it, so a changed plan is seen.
 */
export interface RedrivePlan {
  /** Version of the plan format: 2. */
  readonly version: 2;
  /** The broker it was made on; approving or executing it on another throws `RedrivePlanStaleError`. */
  readonly transport: 'kafka' | 'rabbitmq';
  /** The admin principal who made the plan: may not approve it (four eyes). */
  readonly plannedBy: string;
  /** The dead-letter destination (Kafka topic or RabbitMQ queue). */
  readonly source: string;
  /**
   * Where the messages go, derived from the source's name and checked against every message's
   * `msg.origin-destination`: Kafka, the destination topic; RabbitMQ, the group's work queue.
   */
  readonly target: string;
  /** The consumer group that failed the messages: the only one that gets them again. */
  readonly group: string;
  /** When it was made, ISO 8601, on the planning service's clock. */
  readonly createdAt: string;
  /** Messages waiting in the source when planned (RabbitMQ: ready; Kafka: not yet redriven). */
  readonly depth: number;
  /** At most 100, in the order they would be moved. */
  readonly messages: readonly PlannedMessage[];
  /**
   * What execute does with them: `redrive` (absent: the same), `discard`, archiving them in `target`, or
   * `edit`, publishing the one message's edited copy (`edit`) to `target` and archiving the original.
   */
  readonly action?: PlanAction;
  /**
   * An edit plan's edit (`action: 'edit'`, made by `RedriveService.planEdit()`): the edited payload, the
   * header changes and their diff, which the approval covers through `hash`. Absent for other plans.
   */
  readonly edit?: PlanEdit;
  /** How the messages were chosen; absent: the first ones from the head. */
  readonly selection?: PlanSelection;
  /**
   * Messages the selection took that cannot be redriven (their origin is refused, their key cannot be
   * restored): not in `messages`, they stay in the source, never blocking the rest. Discard them with a plan
   * of their own.
   */
  readonly skipped?: readonly SkippedMessage[];
  /**
   * Kafka, a selection: records the plan does not take that lie before a taken one in its partition. A topic
   * is passed in order, so execute re-parks each at the end of the source (its copy confirmed first) and they
   * stay, in their order. RabbitMQ leaves unselected messages where they are.
   */
  readonly kept?: readonly PlannedMessage[];
  /**
   * A selection by ids: the ids picked that are not among the messages read from the source (the first
   * `RedriveLimits.MAX_SCAN`): redriven or discarded since, deeper in the source, or mistyped. Absent when
   * every id was found.
   */
  readonly notFound?: readonly string[];
  /**
   * Set when the read's byte budget (`RedriveServiceOptions.readBudgetBytes`) stopped it while more were
   * waiting: the plan covers only the messages read (from the head: fewer than asked; a selection: chosen
   * among the messages read, and `notFound` means not among them), and says how many it did not read.
   */
  readonly cutOff?: ReadCutOff;
  /**
   * A plan for an incident at scale (`RedriveService.planBulk()`): its messages are not listed here
   * (`messages` is empty) but held, in order, in the admin database's plan store, and this field signs them
   * by count and digest; execution re-derives the digest before anything moves and pages through them.
   */
  readonly bulk?: BulkSelection;
  /** SHA-256 of the plan's canonical JSON without this field. */
  readonly hash: string;
}

/** A plan before its hash is computed. */
export type UnsealedRedrivePlan = Omit<RedrivePlan, 'hash'>;

/** The hash a plan's content must have (a redrive plan's or a replay plan's: one rule for both). */
export function planHash(plan: object): string {
  const { hash: _ignored, ...content } = plan as { hash?: string };
  return `sha256:${createHash('sha256').update(canonicalJson(content)).digest('hex')}`;
}

/** Adds the hash to a plan's content. */
export function sealPlan(content: UnsealedRedrivePlan): RedrivePlan {
  return { ...content, hash: planHash(content) };
}

/** True when the plan's content still matches its hash. */
export function isPlanIntact(plan: { readonly hash: string }): boolean {
  return planHash(plan) === plan.hash;
}
