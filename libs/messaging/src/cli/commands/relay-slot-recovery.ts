import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { LogicalNames } from '../../outbox/logical/logical-names';
import { formatLsn, Lsn, parseLsn } from '../../outbox/logical/lsn';
import {
  createReplicationSlot,
  dropReplicationSlot,
  readReplicationSlot,
  SqlRunner,
} from '../../outbox/logical/replication-slot';
import { RecoveredTransaction, WalMessageCollector } from '../../outbox/logical/wal-message-collector';
import { CliUsageError } from '../cli-usage.error';

/** Recovered messages written into the log per transaction. */
const RECOVERY_BATCH = 500;

/** What `relay slot recover` takes. */
export interface RecoverOptions {
  readonly names: LogicalNames;
  /** Folders holding the WAL segments from the slot's last confirmed position on. */
  readonly walDirs: readonly string[];
  /** pg_waldump of the server's major version. Default: the one on PATH. */
  readonly pgWaldump?: string;
  /** Read from here instead of the slot's last confirmed position (`16/B374D848`). */
  readonly from?: string;
  readonly dryRun?: boolean;
  /**
   * Where the recovery records its progress (the new slot's start, the messages written again so far), so that
   * a recovery that stopped (killed, a lost connection) is finished by running the same command again.
   * Default: `<slot>.recovery.json` in the working directory; removed once the recovery is complete.
   */
  readonly progressFile?: string;
}

/** A recovery's progress, as `progressFile` keeps it. */
interface RecoveryProgress {
  readonly slot: string;
  readonly from: string;
  /** The new slot's start (everything before it is recovered here); undefined while the slot is replaced. */
  until?: string;
  /** Messages written into the log again so far, in commit order. */
  emitted: number;
}

/**
 * Replaces an invalidated slot and writes every message committed from its last confirmed position (`A`) up
 * to the new slot's start (`B`) into the log again, in commit order, with the same content (message ids, so
 * consumers' inboxes drop what they had). The WAL is read before the slot is touched, so a missing segment
 * stops the recovery while nothing has changed.
 */
export async function recoverSlot(sql: SqlRunner, options: RecoverOptions): Promise<string[]> {
  const { names } = options;
  const progressFile = options.progressFile ?? path.resolve(`${names.slot}.recovery.json`);
  const unfinished = await readProgress(progressFile, names.slot);
  const slot = await readReplicationSlot(sql, names);
  if (slot && slot.walStatus !== 'lost' && !unfinished) {
    throw new Error(
      `The slot '${names.slot}' is not invalidated (wal_status ${slot.walStatus}) and no recovery of it is ` +
        `unfinished (${progressFile}): nothing to recover.`,
    );
  }
  if (unfinished && !options.dryRun) return resume(sql, options, unfinished, progressFile, slot);
  const fromText =
    options.from ?? (slot?.confirmedLsn === undefined ? undefined : formatLsn(slot.confirmedLsn));
  if (!fromText) {
    throw new CliUsageError(
      `The slot '${names.slot}' is gone: give --from <lsn>, its last confirmed position.`,
    );
  }
  const from = parseLsn(fromText);
  const waldump = options.pgWaldump ?? 'pg_waldump';
  const segments = await linkSegments(options.walDirs);
  try {
    const [{ size }] = await sql<{ size: string }>(`select current_setting('wal_segment_size') as size`);
    const segmentSize = parseSize(size);
    const timeline = latestTimeline(segments.names);
    const scanFrom = firstSegmentStart(segments.names, from, segmentSize);
    const collector = new WalMessageCollector(names.prefix);
    const [{ flushed }] = await sql<{ flushed: string }>(
      'select pg_current_wal_flush_lsn()::text as flushed',
    );
    const before = parseLsn(flushed);
    await readWal(waldump, segments.dir, scanFrom, before, timeline, collector);
    let until = before;
    if (!options.dryRun) {
      const progress: RecoveryProgress = { slot: names.slot, from: formatLsn(from), emitted: 0 };
      await writeProgress(progressFile, progress);
      if (slot) await dropReplicationSlot(sql, names);
      await createReplicationSlot(sql, names);
      until = (await readReplicationSlot(sql, names))?.confirmedLsn ?? before;
      progress.until = formatLsn(until);
      await writeProgress(progressFile, progress);
      // The WAL grew meanwhile: its segments linked again. From the last record the first scan read, so that
      // a record across `before` is read (the collector counts the one read twice once).
      if (until > before) {
        const later = await linkSegments(options.walDirs);
        try {
          const restart = collector.lastRecordStart ?? scanFrom;
          await readWal(waldump, later.dir, restart, until, timeline, collector);
        } finally {
          await fs.rm(later.dir, { recursive: true, force: true });
        }
      }
    }
    const transactions = collector.transactions(from, until);
    const messages = transactions.reduce((sum, t) => sum + t.messages.length, 0);
    if (!options.dryRun) {
      await emitAgain(sql, names, transactions, 0, (emitted) =>
        writeProgress(progressFile, {
          slot: names.slot,
          from: formatLsn(from),
          until: formatLsn(until),
          emitted,
        }),
      );
      await fs.rm(progressFile, { force: true });
    }
    return [
      `${options.dryRun ? 'Would recover' : 'Recovered'} ${messages} message(s) of ${transactions.length} ` +
        `transaction(s) committed between ${formatLsn(from)} and ${formatLsn(until)}` +
        (options.dryRun ? '.' : `; the new slot '${names.slot}' holds them after ${formatLsn(until)}.`),
      ...(collector.unsupported.length > 0
        ? [
            `Not recovered: messages of ${collector.unsupported.length} prepared (two-phase) transaction(s) still in doubt, ` +
              `xids ${collector.unsupported.join(', ')}.`,
          ]
        : []),
      ...(options.dryRun
        ? []
        : ['Messages written since the slot was replaced go out before the recovered ones.']),
    ];
  } finally {
    await fs.rm(segments.dir, { recursive: true, force: true });
  }
}

/**
 * The recovered messages into the log again, in commit order, a few hundred per transaction, from the
 * `skip`-th on; `done(n)` after each batch with the number written so far (a batch whose `done` did not run is
 * written again by a resumed recovery: duplicates, never a gap).
 */
async function emitAgain(
  sql: SqlRunner,
  names: LogicalNames,
  transactions: readonly RecoveredTransaction[],
  skip: number,
  done: (emitted: number) => Promise<void>,
) {
  const contents = transactions.flatMap((t) => t.messages);
  for (let start = skip; start < contents.length; start += RECOVERY_BATCH) {
    const batch = contents.slice(start, start + RECOVERY_BATCH);
    await sql(
      `select pg_logical_emit_message(true, $1, m.content) from unnest($2::bytea[]) with ordinality as m(content, n)
       order by m.n`,
      [names.prefix, batch],
    );
    await done(start + batch.length);
  }
}

/**
 * Finishes a recovery that stopped: reads `[from, until)` again (the new slot's start recorded, or the slot's
 * confirmed position when it stopped before recording it: later, so duplicates only) and writes what is left.
 */
async function resume(
  sql: SqlRunner,
  options: RecoverOptions,
  progress: RecoveryProgress,
  progressFile: string,
  slot: Awaited<ReturnType<typeof readReplicationSlot>>,
): Promise<string[]> {
  const { names } = options;
  if (!slot || slot.walStatus === 'lost') await createReplicationSlot(sql, names).catch(() => undefined);
  const current = slot && slot.walStatus !== 'lost' ? slot : await readReplicationSlot(sql, names);
  const untilText =
    progress.until ?? (current?.confirmedLsn === undefined ? undefined : formatLsn(current.confirmedLsn));
  if (!untilText)
    throw new Error(
      `The recovery in ${progressFile} cannot resume: the slot '${names.slot}' has no position.`,
    );
  const [from, until] = [parseLsn(progress.from), parseLsn(untilText)];
  const segments = await linkSegments(options.walDirs);
  try {
    const [{ size }] = await sql<{ size: string }>(`select current_setting('wal_segment_size') as size`);
    const collector = new WalMessageCollector(names.prefix);
    const scanFrom = firstSegmentStart(segments.names, from, parseSize(size));
    await readWal(
      options.pgWaldump ?? 'pg_waldump',
      segments.dir,
      scanFrom,
      until,
      latestTimeline(segments.names),
      collector,
    );
    const transactions = collector.transactions(from, until);
    const messages = transactions.reduce((sum, t) => sum + t.messages.length, 0);
    await emitAgain(sql, names, transactions, progress.emitted, (emitted) =>
      writeProgress(progressFile, { ...progress, until: untilText, emitted }),
    );
    await fs.rm(progressFile, { force: true });
    return [
      `Resumed the recovery of ${formatLsn(from)} to ${formatLsn(until)}: ${messages - progress.emitted} of ` +
        `${messages} message(s) written again now (${progress.emitted} before it stopped).`,
    ];
  } finally {
    await fs.rm(segments.dir, { recursive: true, force: true });
  }
}

async function readProgress(file: string, slot: string): Promise<RecoveryProgress | undefined> {
  const text = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const progress = JSON.parse(text) as RecoveryProgress;
  if (progress.slot !== slot)
    throw new CliUsageError(`${file} is the recovery of the slot '${progress.slot}', not '${slot}'.`);
  return progress;
}

/** Writes the progress file whole (a new file renamed over the old: never half written). */
async function writeProgress(file: string, progress: RecoveryProgress): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temporary, JSON.stringify(progress));
  await fs.rename(temporary, file);
}

/** Runs pg_waldump over [start, end) and feeds its lines to the collector; a missing segment is an error. */
async function readWal(
  waldump: string,
  dir: string,
  start: Lsn,
  end: Lsn,
  timeline: number,
  collector: WalMessageCollector,
): Promise<void> {
  const args = [
    `--path=${dir}`,
    `--start=${formatLsn(start)}`,
    `--end=${formatLsn(end)}`,
    `--timeline=${timeline}`,
    '--rmgr=LogicalMessage',
    '--rmgr=Transaction',
  ];
  const child = spawn(waldump, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  for await (const line of createInterface({ input: child.stdout })) collector.feed(line);
  const code = await exited.catch((error: Error) => {
    throw new Error(`Could not run ${waldump} (${error.message}): give --pg-waldump <path>.`);
  });
  if (code !== 0) {
    throw new Error(
      `${waldump} could not read the WAL from ${formatLsn(start)} to ${formatLsn(end)}: ${stderr.trim()}. ` +
        'Put every segment from there on into a --wal-dir (restore them from the archive).',
    );
  }
}

/** A folder of links to every WAL segment of `dirs` (the first copy of a name wins), for pg_waldump. */
async function linkSegments(dirs: readonly string[]): Promise<{ dir: string; names: string[] }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'nest-messaging-wal-'));
  const names: string[] = [];
  for (const source of dirs) {
    if (!existsSync(source)) throw new CliUsageError(`--wal-dir ${source} does not exist.`);
    for (const name of await fs.readdir(source)) {
      if (!/^[0-9A-F]{24}$/.test(name) || names.includes(name)) continue;
      await fs.symlink(path.resolve(source, name), path.join(dir, name));
      names.push(name);
    }
  }
  return { dir, names: names.sort() };
}

/**
 * Where to start reading: the earliest segment at or before `from` that the directories hold, so that a
 * transaction that began before `from` and committed after it has its earlier messages read too.
 */
function firstSegmentStart(names: readonly string[], from: Lsn, segmentSize: bigint): Lsn {
  const starts = names.map((name) => {
    const log = BigInt(`0x${name.slice(8, 16)}`);
    const seg = BigInt(`0x${name.slice(16, 24)}`);
    return log * (0x1_0000_0000n / segmentSize) * segmentSize + seg * segmentSize;
  });
  const earlier = starts.filter((start) => start <= from);
  if (earlier.length === 0) {
    throw new CliUsageError(
      `No --wal-dir holds the segment of ${formatLsn(from)}: restore the WAL from there on from the archive.`,
    );
  }
  return earlier.reduce((a, b) => (a < b ? a : b));
}

/** The newest timeline the segments are of (a segment's name starts with its timeline). */
function latestTimeline(names: readonly string[]): number {
  return names.reduce((max, name) => Math.max(max, Number.parseInt(name.slice(0, 8), 16)), 1);
}

/** `16MB`, `1MB` (as `SHOW wal_segment_size` prints it) → bytes. */
function parseSize(text: string): bigint {
  const match = /^(\d+)\s*(kB|MB|GB)?$/.exec(text.trim());
  if (!match) throw new Error(`Unexpected wal_segment_size '${text}'.`);
  const unit = { kB: 1024n, MB: 1024n ** 2n, GB: 1024n ** 3n }[match[2] as 'kB' | 'MB' | 'GB'] ?? 1n;
  return BigInt(match[1]) * unit;
}
