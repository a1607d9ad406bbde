import { Command } from 'commander';
import type * as Pg from 'pg';
import { requirePeer } from '../../common/optional-peer';
import { logicalNames, LogicalNames, tenantLogicalNames } from '../../outbox/logical/logical-names';
import { formatLsn } from '../../outbox/logical/lsn';
import {
  countUnreadMessages,
  createReplicationSlot,
  dropReplicationSlot,
  readReplicationServer,
  readReplicationSlot,
  SqlRunner,
} from '../../outbox/logical/replication-slot';
import { CliUsageError } from '../cli-usage.error';
import { CommandContext } from './command-context';
import { recoverSlot } from './relay-slot-recovery';

/** The service's database, as a role with the REPLICATION attribute (never a flag: it may hold a password). */
const DATABASE_URL_ENV = 'MESSAGING_RELAY_DATABASE_URL';
/** Changes `drop` reads from the slot to count the messages no relay confirmed. */
const PEEK_LIMIT = 100_000;

interface SlotFlags {
  readonly slot?: string;
  readonly schema?: string;
  readonly tenant?: string;
}

interface DropFlags extends SlotFlags {
  readonly force?: boolean;
}

interface RecoverFlags extends SlotFlags {
  readonly walDir: string[];
  readonly pgWaldump?: string;
  readonly from?: string;
  readonly dryRun?: boolean;
  readonly progressFile?: string;
}

/**
 * `nest-messaging relay slot create | drop | status | recover`: the replication slot `relay.mode: 'logical'`
 * reads, on the service's database (`MESSAGING_RELAY_DATABASE_URL`, a role with REPLICATION).
 */
export function relayCommand(context: CommandContext): Command {
  const withSlot = (command: Command) =>
    command
      .option('--slot <name>', "the slot, as the service's relay.slot names it")
      .option('--schema <name>', "or the outbox's schema, when relay.slot is left to its default")
      .option('--tenant <name>', "or a tenant's (the tenants option): its slot, messaging_tenant_<name>");
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
    .option(
      '--progress-file <path>',
      'where the recovery records its progress; running the same command again finishes a recovery that ' +
        'stopped (default: <slot>.recovery.json in the working directory, removed once complete)',
    )
    .action((flags: RecoverFlags) =>
      withDatabase(context, async (sql) => {
        const options = { ...flags, names: namesOf(flags), walDirs: flags.walDir };
        context.print(await recoverSlot(sql, options));
      }),
    );
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

function namesOf(flags: SlotFlags): LogicalNames {
  if (flags.slot && !/^[a-z0-9_]{1,63}$/.test(flags.slot)) {
    throw new CliUsageError('--slot is 1-63 lower-case letters, digits or "_".');
  }
  if (flags.tenant !== undefined) {
    if (flags.slot !== undefined || flags.schema !== undefined) {
      throw new CliUsageError("Give --tenant alone: a tenant's slot is named after it, whatever its schema.");
    }
    return tenantLogicalNames(flags.tenant);
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
  // A connection lost mid-command fails the statement in flight (that error is reported); the client's own
  // 'error' event must not end the process besides.
  client.on('error', () => undefined);
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
