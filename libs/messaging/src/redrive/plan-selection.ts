/**
 * Which messages of a dead-letter destination a plan takes, written into the plan so that the approver sees
 * how they were chosen (the plan's `messages` list each one):
 * - `ids`: these message ids, picked by hand;
 * - `filter`: every message matching all the given fields. A group (failure category and code, as the
 *   console groups dead letters) is a filter on `category` and `code`.
 */
export type PlanSelection =
  | {
      readonly by: 'ids';
      /** The `msg.id`s picked; ids not found in the destination are listed in the plan's `notFound`. */
      readonly messageIds: readonly string[];
    }
  | {
      readonly by: 'filter';
      /** `msg.failure-category`, e.g. `TRANSIENT`. Default: any. */
      readonly category?: string;
      /** `msg.failure-code`, e.g. `QueryFailedError/P0001`. Default: any. */
      readonly code?: string;
      /** `msg.type`, the event type. Default: any. */
      readonly type?: string;
      /** Only messages whose last failure is at least this many minutes before planning. Default: any age. */
      readonly olderThanMinutes?: number;
    };

/**
 * What a plan does with its messages: moves them back (`redrive`), archives them (`discard`), or publishes
 * one message's edited copy and archives the original (`edit`, planned with `RedriveService.planEdit()`).
 */
export type PlanAction = 'redrive' | 'discard' | 'edit';

/** The selection in a few words, as a plan's reader sees it: `ids a, b` or `code=X type=Y`. */
export function describeSelection(selection: PlanSelection | undefined): string {
  if (!selection) return 'from the head';
  if (selection.by === 'ids') return `message ids ${selection.messageIds.join(', ')}`;
  const parts = [
    selection.category !== undefined ? `category ${selection.category}` : '',
    selection.code !== undefined ? `code ${selection.code}` : '',
    selection.type !== undefined ? `type ${selection.type}` : '',
    selection.olderThanMinutes !== undefined ? `last failure ≥ ${selection.olderThanMinutes} min ago` : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : 'every message';
}
