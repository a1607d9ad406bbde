import { ReplayWindowError } from '../errors/replay-window.error';
import { ReplayLimits } from './replay-limits';
import { ReplayPartitionWindow } from './replay-plan';

/** A partition's offsets as the broker gives them: the first kept (`low`) and the next to be written (`high`). */
export interface PartitionWatermarks {
  readonly partition: number;
  readonly low: string;
  readonly high: string;
}

/**
 * Parses `--offsets`: `<partition>:<from>-<to>` comma-separated, `to` exclusive, e.g. `0:120-180,2:40-41`.
 * Each partition once.
 */
export function parseOffsetWindows(text: string): ReplayPartitionWindow[] {
  const windows: ReplayPartitionWindow[] = [];
  for (const part of text.split(',').map((p) => p.trim())) {
    const match = /^(\d+):(\d+)-(\d+)$/.exec(part);
    if (!match) {
      throw new ReplayWindowError(`'${part}' is not <partition>:<from>-<to> (offsets, the end exclusive)`);
    }
    const [, partition, from, to] = match;
    windows.push({ partition: Number(partition), from: BigInt(from).toString(), to: BigInt(to).toString() });
  }
  const seen = new Set<number>();
  for (const w of windows) {
    if (seen.has(w.partition)) throw new ReplayWindowError(`partition ${w.partition} is named twice`);
    seen.add(w.partition);
  }
  return windows;
}

/**
 * The windows between the offsets two time lookups gave (`fetchTopicOffsetsByTimestamp`: per partition the
 * first offset at or after the time, or the end of the log): `[atFrom, atTo)`, the empty ones left out.
 */
export function windowsBetween(
  atFrom: readonly { partition: number; offset: string }[],
  atTo: readonly { partition: number; offset: string }[],
): ReplayPartitionWindow[] {
  const ends = new Map(atTo.map((p) => [p.partition, BigInt(p.offset)]));
  return [...atFrom]
    .sort((a, b) => a.partition - b.partition)
    .flatMap((p) => {
      const from = BigInt(p.offset);
      const to = ends.get(p.partition) ?? from;
      return to > from ? [{ partition: p.partition, from: from.toString(), to: to.toString() }] : [];
    });
}

/**
 * Checks windows against the topic's partitions: each names a partition the topic has, `from <= to`, and lies
 * within what the log keeps (`low <= from`, `to <= high`); at most `ReplayLimits.MAX_RECORDS` offsets in all.
 * Resolves with the non-empty ones by partition, and the number of offsets they span.
 */
export function checkWindows(
  topic: string,
  windows: readonly ReplayPartitionWindow[],
  watermarks: readonly PartitionWatermarks[],
): { partitions: ReplayPartitionWindow[]; records: number } {
  const marks = new Map(watermarks.map((w) => [w.partition, w]));
  let records = 0n;
  const kept: ReplayPartitionWindow[] = [];
  for (const w of [...windows].sort((a, b) => a.partition - b.partition)) {
    const mark = marks.get(w.partition);
    if (!mark) throw new ReplayWindowError(`${topic} has no partition ${w.partition}`);
    const [from, to] = [BigInt(w.from), BigInt(w.to)];
    if (from > to) throw new ReplayWindowError(`partition ${w.partition}: ${w.from} is after ${w.to}`);
    if (from < BigInt(mark.low)) {
      throw new ReplayWindowError(
        `partition ${w.partition} keeps offsets from ${mark.low} only (retention deleted the ones before)`,
      );
    }
    if (to > BigInt(mark.high)) {
      throw new ReplayWindowError(`partition ${w.partition} ends at ${mark.high}, before ${w.to}`);
    }
    if (to === from) continue;
    records += to - from;
    kept.push({ partition: w.partition, from: from.toString(), to: to.toString() });
  }
  if (records > BigInt(ReplayLimits.MAX_RECORDS)) {
    throw new ReplayWindowError(
      `it spans ${records} offsets, more than ${ReplayLimits.MAX_RECORDS}: replay a shorter window at a time`,
    );
  }
  return { partitions: kept, records: Number(records) };
}

/** Checks a rate: a whole number of copies per second from 1 to `ReplayLimits.MAX_RATE_PER_SECOND`. */
export function checkRate(ratePerSecond: number): number {
  if (
    !Number.isInteger(ratePerSecond) ||
    ratePerSecond < 1 ||
    ratePerSecond > ReplayLimits.MAX_RATE_PER_SECOND
  ) {
    throw new ReplayWindowError(
      `the rate must be a whole number of messages per second from 1 to ${ReplayLimits.MAX_RATE_PER_SECOND}`,
    );
  }
  return ratePerSecond;
}

/** A journal's offsets (RabbitMQ, partition 0), with the time of its first message when it has one. */
export interface JournalWatermarks extends PartitionWatermarks {
  /** Its first message's time, ms. */
  readonly firstTime?: number;
}

/**
 * A window by time in a RabbitMQ journal: from the first message scanned at or after `from` to the first
 * at or after `to`, or the journal's end (`high`) when the scan ended there; empty: none. `scanned` is what a
 * read from before `from` met, in offset order, each with its time (undefined: none, such a message bounds
 * nothing). Refuses an empty journal, and a window that starts before the journal's first message: what was
 * published then is not in it (retention deleted it, or the journal did not exist yet).
 */
export function journalWindowByTime(
  journal: string,
  window: { readonly from: Date; readonly to: Date },
  mark: JournalWatermarks,
  scanned: readonly { readonly offset: number; readonly time: number | undefined }[],
): ReplayPartitionWindow[] {
  const [low, high] = [Number(mark.low), Number(mark.high)];
  if (high <= low) throw new ReplayWindowError(`${journal} holds no message: nothing to replay`);
  if (mark.firstTime !== undefined && mark.firstTime > window.from.getTime()) {
    throw new ReplayWindowError(
      `${journal} keeps messages from ${new Date(mark.firstTime).toISOString()} only (retention deleted the ` +
        'ones before, or it did not exist yet): start the window at or after that time',
    );
  }
  const kept = scanned.filter((m) => m.offset >= low && m.offset < high);
  const at = (time: number) => kept.find((m) => m.time !== undefined && m.time >= time)?.offset;
  const last = kept.at(-1);
  const end = at(window.to.getTime()) ?? (last && last.offset + 1 < high ? last.offset + 1 : high);
  const start = Math.min(at(window.from.getTime()) ?? end, end);
  return end > start ? [{ partition: 0, from: String(start), to: String(end) }] : [];
}
