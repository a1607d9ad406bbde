import { planHash } from '../redrive-plan';

/**
 * What the group's inbox does with a replayed record (issue 40, item 3):
 * - `skip`: the copy keeps the record's message id and the redrive id it had (none: empty), so the inbox
 *   key is the one the group recorded when it handled the record: what it handled is dropped as a
 *   duplicate, what it never handled (failed, or older than the inbox's retention) is applied.
 * - `reprocess`: the copy carries a message id derived from the replay's id and the record's (the record's
 *   own in `msg.replay-of`): the inbox, keyed on (group, message id), has not seen it, so every record is
 *   applied again, once per replay (a second run of the same plan derives the same ids: absorbed).
 */
export type ReplayInboxMode = 'skip' | 'reprocess';

/** One partition's part of a replay window: offsets `[from, to)`. */
export interface ReplayPartitionWindow {
  /** The partition. */
  readonly partition: number;
  /** The first offset replayed, a decimal string. */
  readonly from: string;
  /** The offset after the last one replayed (exclusive), a decimal string. */
  readonly to: string;
}

/**
 * A replay plan (issue 40, item 3): re-deliver a Kafka topic's records between two times or two offsets
 * per partition to one consumer group, at a bounded rate. A new kind of plan on the redrive's path: the same
 * PLAN entry, the same signed approval (of its hash), the same four eyes, the same audit log; `kind` keeps
 * its hash apart from any redrive plan's. Plain data, written to a file and read back like a redrive plan.
 */
export interface ReplayPlan {
  /** Version of the plan format: 2, as the redrive plan's. */
  readonly version: 2;
  /** What sets it apart from a redrive plan. */
  readonly kind: 'replay';
  /** The broker: Kafka reads the topic; RabbitMQ reads the destination's journal (a stream queue). */
  readonly transport: 'kafka' | 'rabbitmq';
  /** The admin principal who made the plan: may not approve it (four eyes). */
  readonly plannedBy: string;
  /** The topic (Kafka) or destination (RabbitMQ) whose records are replayed. */
  readonly source: string;
  /**
   * Where the copies go: on Kafka the same topic (the other groups skip them, as they skip a redrive's); on
   * RabbitMQ the group's work queue `<destination>.<group>`, through the default exchange.
   */
  readonly target: string;
  /** RabbitMQ: the journal read, `<destination>:journal` (its offsets are partition 0's). */
  readonly journal?: string;
  /** The only consumer group that handles the copies. */
  readonly group: string;
  /** When it was made, ISO 8601. */
  readonly createdAt: string;
  /** The window as the operator asked for it: two times (ISO 8601), or offsets per partition. */
  readonly window:
    { readonly by: 'time'; readonly from: string; readonly to: string } | { readonly by: 'offsets' };
  /** The offsets replayed, per partition (the times resolved by the broker's time index). */
  readonly partitions: readonly ReplayPartitionWindow[];
  /** Offsets in the window, all partitions: the records replayed at most (a compacted log has gaps). */
  readonly records: number;
  /** What the group's inbox does with the copies. */
  readonly inbox: ReplayInboxMode;
  /** At most this many copies are published per second. */
  readonly ratePerSecond: number;
  /**
   * The replay's id, fixed when it was planned: the copies' `msg.replay-id` and, in `reprocess`, what their
   * message ids are derived from; running the plan again (a second approval, a resume after a crash) uses it
   * again, so the inbox drops what the first run applied.
   */
  readonly replayId: string;
  /** SHA-256 of the plan's canonical JSON without this field. */
  readonly hash: string;
}

/** A replay plan before its hash is computed. */
export type UnsealedReplayPlan = Omit<ReplayPlan, 'hash'>;

/** True when `plan` is a replay plan (a redrive plan has no `kind`). */
export function isReplayPlan(plan: object): plan is ReplayPlan {
  return (plan as { kind?: unknown }).kind === 'replay';
}

/** Adds the hash to a replay plan's content (the redrive plan's hash rule: `planHash`). */
export function sealReplayPlan(content: UnsealedReplayPlan): ReplayPlan {
  return { ...content, hash: planHash(content) };
}

/** What an audit entry says of a replay: the window, the group, the inbox mode and the rate. */
export function replayDetail(plan: ReplayPlan): string {
  const window =
    plan.window.by === 'time'
      ? `${plan.window.from} to ${plan.window.to}`
      : plan.partitions.map((p) => `${p.partition}:${p.from}-${p.to}`).join(',');
  const read = plan.journal !== undefined ? `${plan.source}'s journal ${plan.journal}` : plan.source;
  return (
    `replay ${plan.replayId} of ${read} (${window}), ${plan.records} records to group ${plan.group}, ` +
    `inbox ${plan.inbox}, at most ${plan.ratePerSecond}/s`
  );
}
