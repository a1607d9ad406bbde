import { InspectedDeadLetter } from './inspected-dead-letter';

/** Dead letters that failed for the same cause: one failure category and code. */
export interface DeadLetterGroup {
  /** `msg.failure-category` (null when absent). */
  readonly category: string | null;
  /** `msg.failure-code`, e.g. `QueryFailedError/P0001` (null when absent). */
  readonly code: string | null;
  /** Messages in the group. */
  readonly count: number;
  /** The earliest first failure of its messages, ISO 8601 (null when none carries one). */
  readonly firstSeen: string | null;
  /** The latest last failure of its messages, ISO 8601 (null when none carries one). */
  readonly lastSeen: string | null;
  /** The event types in the group, sorted. */
  readonly types: readonly string[];
}

/** Dead letters grouped by failure category and code, the largest group first (then by name). */
export function groupDeadLetters(letters: readonly InspectedDeadLetter[]): DeadLetterGroup[] {
  const groups = new Map<string, { group: DeadLetterGroup; types: Set<string> }>();
  for (const letter of letters) {
    const m = letter.message;
    const id = JSON.stringify([m.failureCategory, m.failureCode]);
    const seen = groups.get(id) ?? {
      group: {
        category: m.failureCategory,
        code: m.failureCode,
        count: 0,
        firstSeen: null,
        lastSeen: null,
        types: [],
      },
      types: new Set<string>(),
    };
    const first = letter.firstFailureAt ?? m.lastFailureAt;
    seen.group = {
      ...seen.group,
      count: seen.group.count + 1,
      firstSeen: earlier(seen.group.firstSeen, first),
      lastSeen: later(seen.group.lastSeen, m.lastFailureAt ?? letter.firstFailureAt),
    };
    if (m.type !== null) seen.types.add(m.type);
    groups.set(id, seen);
  }
  return [...groups.values()]
    .map(({ group, types }) => ({ ...group, types: [...types].sort() }))
    .sort((a, b) => b.count - a.count || `${a.category}/${a.code}`.localeCompare(`${b.category}/${b.code}`));
}

function earlier(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return Date.parse(b) < Date.parse(a) ? b : a;
}

function later(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return Date.parse(b) > Date.parse(a) ? b : a;
}
