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
}

/**
 * Replaces an invalidated slot and writes every message committed from its last confirmed position (`A`) up
 * to the new slot's start (`B`) into the log again, in commit order, with the same content (message ids, so
 * consumers' inboxes drop what they had). The WAL is read before the slot is touched, so a missing segment
 * stops the recovery while nothing has changed.
 */
export async function recoverSlot(sql: SqlRunner, options: RecoverOptions): Promise<string[]> {
  const { names } = options;
  const slot = await readReplicationSlot(sql, names);
  if (slot && slot.walStatus !== 'lost') {
    throw new Error(
      `The slot '${names.slot}' is not invalidated (wal_status ${slot.walStatus}): nothing to recover.`,
    );
  }
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
      if (slot) await dropReplicationSlot(sql, names);
      await createReplicationSlot(sql, names);
      until = (await readReplicationSlot(sql, names))?.confirmedLsn ?? before;
      if (until > before) await readWal(waldump, segments.dir, before, until, timeline, collector);
    }
    const transactions = collector.transactions(from, until);
    const messages = transactions.reduce((sum, t) => sum + t.messages.length, 0);
    if (!options.dryRun) await emitAgain(sql, names, transactions);
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

/** The recovered messages into the log again, in commit order, a few hundred per transaction. */
async function emitAgain(sql: SqlRunner, names: LogicalNames, transactions: readonly RecoveredTransaction[]) {
  const contents = transactions.flatMap((t) => t.messages);
  for (let start = 0; start < contents.length; start += RECOVERY_BATCH) {
    await sql(
      `select pg_logical_emit_message(true, $1, m.content) from unnest($2::bytea[]) with ordinality as m(content, n)
       order by m.n`,
      [names.prefix, contents.slice(start, start + RECOVERY_BATCH)],
    );
  }
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
