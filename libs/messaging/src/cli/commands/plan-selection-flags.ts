import { PlanSelection } from '../../redrive/plan-selection';
import { CliUsageError } from '../cli-usage.error';
import { parseDuration } from '../duration';

/** The selection flags of `dlq plan`. */
export interface SelectionFlags {
  readonly ids?: string;
  readonly category?: string;
  readonly code?: string;
  readonly type?: string;
  readonly olderThan?: string;
}

/** The selection the flags ask for; undefined (from the head) when none is given. `--ids` excludes the filters. */
export function selectionOf(flags: SelectionFlags): PlanSelection | undefined {
  const filter = {
    ...(flags.category !== undefined ? { category: flags.category } : {}),
    ...(flags.code !== undefined ? { code: flags.code } : {}),
    ...(flags.type !== undefined ? { type: flags.type } : {}),
    ...(flags.olderThan !== undefined ? { olderThanMinutes: parseDuration(flags.olderThan) / 60_000 } : {}),
  };
  if (flags.ids !== undefined) {
    if (Object.keys(filter).length > 0) {
      throw new CliUsageError(
        '--ids picks messages by hand: leave out --category, --code, --type and --older-than.',
      );
    }
    const messageIds = flags.ids
      .split(',')
      .map((id) => id.trim())
      .filter(Boolean);
    if (messageIds.length === 0) throw new CliUsageError('--ids needs at least one message id.');
    return { by: 'ids', messageIds };
  }
  return Object.keys(filter).length > 0 ? { by: 'filter', ...filter } : undefined;
}
