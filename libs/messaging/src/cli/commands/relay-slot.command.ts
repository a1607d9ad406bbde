import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { Command } from 'commander';
import type * as Pg from 'pg';
import { requirePeer } from '../../common/optional-peer';
import { logicalNames, LogicalNames } from '../../outbox/logical/logical-names';
import { formatLsn, Lsn, parseLsn } from '../../outbox/logical/lsn';
import {
  countUnreadMessages,
  createReplicationSlot,
  dropReplicationSlot,
  readReplicationServer,
  readReplicationSlot,
  SqlRunner,
} from '../../outbox/logical/replication-slot';
import { RecoveredTransaction, WalMessageCollector } from '../../outbox/logical/wal-message-collector';
import { CliUsageError } from '../cli-usage.error';
import { CommandContext } from './command-context';

/** The service's database, as a role with the REPLICATION attribute (never a flag: it may hold a password). */
const DATABASE_URL_ENV = 'MESSAGING_RELAY_DATABASE_URL';
/** Changes `drop` reads from the slot to count the messages no relay confirmed. */
const PEEK_LIMIT = 100_000;
/** Recovered messages written into the log per transaction. */
const RECOVERY_BATCH = 500;

interface SlotFlags {
  readonly slot?: string;
  readonly schema?: string;
}

interface DropFlags extends SlotFlags {
  readonly force?: boolean;
}

interface RecoverFlags extends SlotFlags {
  readonly walDir: string[];
  readonly pgWaldump?: string;
  readonly from?: string;
  readonly dryRun?: boolean;
}

/**
 * `nest-messaging relay slot create | drop | status | recover`: the replication slot `relay.mode: 'logical'`
 * reads, on the service's database (`MESSAGING_RELAY_DATABASE_URL`, a role with REPLICATION).
 */
export function relayCommand(context: CommandContext): Command {
  const withSlot = (command: Command) =>
    command
      .option('--slot <name>', "the slot, as the service's relay.slot names it")
      .option('--schema <name>', "or the outbox's schema, when relay.slot is left to its default");
  const create = withSlot(new Command('create'))
    .description('create the slot and its publication (before the service starts; idempotent)')
    .action((flags: SlotFlags) =>
      withDatabase(context, async (sql) => {
        const names = namesOf(flags);
        const server = await readReplicationServer(sql);
        if (server.walLevel !== 'logical') {
          throw new Error(
            `wal_level is '${server.walLevel}': set it to logical (ALTER SYSTEM SET wal_level = logical) and ` +
              'restart PostgreSQL first.',
          );
        }
        const existing = await readReplicationSlot(sql, names);
        if (existing?.walStatus === 'lost') {
          throw new Error(
            `The slot '${names.slot}' exists and was invalidated: recover with nest-messaging relay slot ` +
              'recover --wal-dir <WAL archive>, which replaces it.',
          );
        }
        const created = await createReplicationSlot(sql, names);
        const slot = await readReplicationSlot(sql, names);
        context.print([
          created
            ? `Created the slot '${names.slot}' (pgoutput) and its publication; it keeps messages from ` +
              `${slot?.confirmedLsn === undefined ? 'now' : formatLsn(slot.confirmedLsn)} on.`
            : `The slot '${names.slot}' exists already.`,
          `max_slot_wal_keep_size is ${server.maxSlotWalKeepSize === '-1' ? 'unlimited (-1)' : server.maxSlotWalKeepSize}: ` +
            'the WAL a stopped relay can make PostgreSQL keep (see the guide, "WAL a dead relay pins").',
        ]);
      }),
    );
  const drop = withSlot(new Command('drop'))
    .description('drop the slot and its publication; refuses while it holds messages no relay confirmed')
    .option('--force', 'drop it even so: those messages are lost')
    .action((flags: DropFlags) =>
      withDatabase(context, async (sql) => {
        const names = namesOf(flags);
        const slot = await readReplicationSlot(sql, names);
        if (!slot) {
          context.print([`There is no slot '${names.slot}'.`]);
          return;
        }
        if (slot.active) {
          throw new Error(
            `A relay reads the slot '${names.slot}' (walsender pid ${slot.activePid}): stop the service first.`,
          );
        }
        if (!flags.force && slot.walStatus !== 'lost') {
          const unread = await countUnreadMessages(sql, names, PEEK_LIMIT);
          if (unread.messages > 0) {
            throw new Error(
              `The slot '${names.slot}' holds ${unread.messages}${unread.complete ? '' : '+'} message(s) no ` +
                'relay confirmed: start the service so that its relay publishes them, or --force to lose them.',
            );
          }
        }
        await dropReplicationSlot(sql, names);
        context.print([
          `Dropped the slot '${names.slot}' and its publication. Services with relay.mode 'logical' on it ` +
            'no longer start; messages they write meanwhile are in no slot.',
        ]);
      }),
    );
  const status = withSlot(new Command('status'))
    .description('show the slot: who reads it, how far behind it is, how much WAL it may still keep')
    .action((flags: SlotFlags) =>
      withDatabase(context, async (sql) => {
        const names = namesOf(flags);
        const [server, slot] = await Promise.all([
          readReplicationServer(sql),
          readReplicationSlot(sql, names),
        ]);
        if (!slot) throw new Error(`There is no slot '${names.slot}': nest-messaging relay slot create.`);
        context.print([
          `slot ${names.slot} (${slot.plugin}, database ${slot.database})`,
          `  read by        ${slot.active ? `walsender pid ${slot.activePid}` : 'no relay now'}`,
          `  confirmed      ${slot.confirmedLsn === undefined ? '-' : formatLsn(slot.confirmedLsn)}`,
          `  lag            ${slot.lagBytes ?? '-'} bytes of WAL`,
          `  wal_status     ${slot.walStatus ?? '-'}`,
          `  safe_wal_size  ${slot.safeWalSize ?? 'no limit'}${slot.safeWalSize === undefined ? '' : ' bytes'}`,
          `  server         wal_level ${server.walLevel}, max_slot_wal_keep_size ${server.maxSlotWalKeepSize}`,
        ]);
      }),
    );
  const recover = withSlot(new Command('recover'))
    .description(
      'after the slot was invalidated: replace it, and write the messages committed since its last ' +
        'confirmed position into the log again, read from the WAL archive with pg_waldump',
    )
    .requiredOption(
      '--wal-dir <dirs...>',
      "directories holding the WAL segments from the slot's last confirmed position on (the archive, pg_wal)",
    )
    .option('--pg-waldump <path>', 'pg_waldump of the server major version (default: the one on PATH)')
    .option('--from <lsn>', "read from this position instead of the slot's last confirmed one")
    .option('--dry-run', 'only count what would be recovered; change nothing')
    .action((flags: RecoverFlags) => withDatabase(context, (sql) => recoverSlot(context, sql, flags)));
  return new Command('relay')
    .description("the logical relay's replication slot (relay.mode 'logical', PostgreSQL)")
    .addCommand(
      new Command('slot')
        .description("create, drop, inspect or recover the slot relay.mode 'logical' reads")
        .addCommand(create)
        .addCommand(drop)
        .addCommand(status)
        .addCommand(recover),
    );
}

/**
 * Replaces an invalidated slot and writes every message committed from its last confirmed position (`A`) up
 * to the new slot's start (`B`) into the log again, in commit order, with the same content (message ids, so
 * consumers' inboxes drop what they had). The WAL is read before the slot is touched, so a missing segment
 * stops the recovery while nothing has changed.
 */
async function recoverSlot(context: CommandContext, sql: SqlRunner, flags: RecoverFlags): Promise<void> {
  const names = namesOf(flags);
  const slot = await readReplicationSlot(sql, names);
  if (slot && slot.walStatus !== 'lost') {
    throw new Error(
      `The slot '${names.slot}' is not invalidated (wal_status ${slot.walStatus}): nothing to recover.`,
    );
  }
  const fromText =
    flags.from ?? (slot?.confirmedLsn === undefined ? undefined : formatLsn(slot.confirmedLsn));
  if (!fromText) {
    throw new CliUsageError(
      `The slot '${names.slot}' is gone: give --from <lsn>, its last confirmed position.`,
    );
  }
  const from = parseLsn(fromText);
  const waldump = flags.pgWaldump ?? 'pg_waldump';
  const segments = await linkSegments(flags.walDir);
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
    if (!flags.dryRun) {
      if (slot) await dropReplicationSlot(sql, names);
      await createReplicationSlot(sql, names);
      until = (await readReplicationSlot(sql, names))?.confirmedLsn ?? before;
      if (until > before) await readWal(waldump, segments.dir, before, until, timeline, collector);
    }
    const transactions = collector.transactions(from, until);
    const messages = transactions.reduce((sum, t) => sum + t.messages.length, 0);
    if (!flags.dryRun) await emitAgain(sql, names, transactions);
    context.print([
      `${flags.dryRun ? 'Would recover' : 'Recovered'} ${messages} message(s) of ${transactions.length} ` +
        `transaction(s) committed between ${formatLsn(from)} and ${formatLsn(until)}` +
        (flags.dryRun ? '.' : `; the new slot '${names.slot}' holds them after ${formatLsn(until)}.`),
      ...(collector.unsupported.length > 0
        ? [
            `Not recovered: messages of ${collector.unsupported.length} prepared (two-phase) transaction(s) still in doubt, ` +
              `xids ${collector.unsupported.join(', ')}.`,
          ]
        : []),
      ...(flags.dryRun
        ? []
        : ['Messages written since the slot was replaced go out before the recovered ones.']),
    ]);
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

function namesOf(flags: SlotFlags): LogicalNames {
  if (flags.slot && !/^[a-z0-9_]{1,63}$/.test(flags.slot)) {
    throw new CliUsageError('--slot is 1-63 lower-case letters, digits or "_".');
  }
  return logicalNames(flags.schema, flags.slot);
}

/** Runs `work` on a connection to the service database, then closes it. */
async function withDatabase(context: CommandContext, work: (sql: SqlRunner) => Promise<void>): Promise<void> {
  const url = context.io.env[DATABASE_URL_ENV];
  if (!url) {
    throw new CliUsageError(
      `Give the service's database in ${DATABASE_URL_ENV} (postgres://…, a role with the REPLICATION attribute).`,
    );
  }
  const pg = requirePeer<typeof Pg>('pg', 'nest-messaging relay');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(
      async <R extends object>(text: string, params?: unknown[]) =>
        (await client.query(text, params)).rows as R[],
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
