import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { parseKeySecret } from '../../failure/key-secret';
import { ApproverKeyring } from '../../redrive/approvals/approver-keyring';
import { RedriveRefusedError } from '../../redrive/errors/redrive-refused.error';
import { parseReadBudgetMib } from '../../redrive/read-budget';
import { PostgresRedriveLedger } from '../../redrive/ledger/postgres-redrive-ledger';
import { LazyBulkPlanStore } from '../../redrive/bulk/bulk-plan-store';
import { RedriveLedger } from '../../redrive/ledger/redrive-ledger.interface';
import { CliUsageError } from '../cli-usage.error';
import { RedriveService } from '../../redrive/redrive.service';
import { RedriveServiceOptions } from '../../redrive/redrive-service-options';
import { MessagingTopology, parseMessagingTopology } from '../../topology/messaging-topology';
import { AdminEnv, BrokerFlags, resolveAdminDatabase, resolveAdminOptions } from '../admin-options';
import { cliClock, CliIo, readJson } from '../cli-io';
import { loadEventDefinitions } from '../event-definitions-module';

/** What every command runs with. */
export interface CommandContext {
  readonly io: CliIo;
  /** Prints lines to standard output. */
  print(lines: readonly string[]): void;
  /** Runs `work` with the admin database's ledger, then closes it. */
  withLedger<T>(work: (ledger: PostgresRedriveLedger) => Promise<T>): Promise<T>;
  /**
   * As `withLedger`, for a command that writes the audit log: refused (`AuditLogRewritableError`) when the
   * login can rewrite the log, unless `--allow-rewritable-audit`, which is warned about on standard error and
   * recorded in every entry (issue 45, finding 13).
   */
  withAppendOnlyLedger<T>(
    flags: AppendOnlyFlag,
    work: (ledger: PostgresRedriveLedger) => Promise<T>,
  ): Promise<T>;
  /** The reviewed keyring (`MESSAGING_ADMIN_APPROVERS`); empty when none is given. */
  keyring(): Promise<ApproverKeyring>;
  /** The topology of `--topology` or `MESSAGING_ADMIN_TOPOLOGY`, if either is given. */
  topology(flags: TopologyFlag): Promise<MessagingTopology | undefined>;
  /**
   * Runs `work` with a `RedriveService` built from the flags and environment (broker, admin credential,
   * reviewed keyring, topology, key secret, ledger), then closes it. A refusal to build one is recorded too.
   * The ledger is `withAppendOnlyLedger`'s.
   */
  withService<T>(
    flags: BrokerFlags & TopologyFlag & AppendOnlyFlag,
    work: (service: RedriveService) => Promise<T>,
    about?: { readonly source?: string },
  ): Promise<T>;
  /**
   * Runs read-only `work` (it lists, it records nothing) with a `RedriveService` built from the flags and
   * environment; the admin database is optional for it.
   */
  withReader<T>(flags: BrokerFlags & TopologyFlag, work: (service: RedriveService) => Promise<T>): Promise<T>;
}

/** The flag that names a topology file, and (`dlq edit`) the module of event definitions. */
export interface TopologyFlag {
  readonly topology?: string;
  /** `--events <module>`: the event definitions an edit is checked with. */
  readonly events?: string;
}

/** The flag that accepts a database login that can rewrite the audit log (`--allow-rewritable-audit`). */
export interface AppendOnlyFlag {
  readonly allowRewritableAudit?: boolean;
}

/** A context over `io`. */
export function commandContext(io: CliIo): CommandContext {
  const topology = async (flags: TopologyFlag) => {
    const file = flags.topology ?? (io.env[AdminEnv.TOPOLOGY] || undefined);
    return file === undefined ? undefined : parseMessagingTopology(await readJson(io, file));
  };
  const withLedger = async <T>(work: (ledger: PostgresRedriveLedger) => Promise<T>): Promise<T> => {
    const ledger = await PostgresRedriveLedger.connect(resolveAdminDatabase(io.env));
    try {
      return await work(ledger);
    } finally {
      await ledger.close();
    }
  };
  const withAppendOnlyLedger = <T>(
    flags: AppendOnlyFlag & Pick<BrokerFlags, 'localPlaintext'>,
    work: (ledger: PostgresRedriveLedger) => Promise<T>,
  ): Promise<T> =>
    withLedger(async (ledger) => {
      const allowed =
        flags.allowRewritableAudit === true || io.env[AdminEnv.ALLOW_REWRITABLE_AUDIT] === 'true';
      // Local development (brokers on this machine only, refused for any other) runs on the database's
      // superuser as a matter of course: accepted as the override is, warned about and recorded.
      const local = flags.localPlaintext === true || io.env[AdminEnv.LOCAL_PLAINTEXT] === 'true';
      const rights = await ledger.requireAppendOnly(allowed || local);
      if (rights.length > 0) {
        io.err(
          `WARNING: this admin database login can rewrite the audit log (${rights.join(', ')}). Going on ` +
            `only because of ${allowed ? '--allow-rewritable-audit' : '--local-plaintext (local development)'}; ` +
            'every audit entry of this run records it (rewrite-rights).\n',
        );
      }
      return work(ledger);
    });
  /** What a `RedriveService` on `ledger` is built from: the flags and the environment. */
  const serviceOptions = async (
    flags: BrokerFlags & TopologyFlag,
    ledger: RedriveLedger,
  ): Promise<RedriveServiceOptions> => ({
    ...resolveAdminOptions(flags, io.env),
    ledger,
    approvers: await keyringOf(io),
    topology: await topology(flags),
    ...(flags.events ? { events: loadEventDefinitions(io, flags.events) } : {}),
    keySecret: keySecretOf(io),
    carryHeaders: carryHeadersOf(io),
    readBudgetBytes: readBudgetOf(io),
    clock: cliClock(io),
  });
  /** A `RedriveService` on `ledger` built from the flags and environment; a refusal to build one is recorded. */
  const onLedger =
    <T>(
      flags: BrokerFlags & TopologyFlag,
      work: (service: RedriveService) => Promise<T>,
      about?: { readonly source?: string },
    ) =>
    async (ledger: PostgresRedriveLedger): Promise<T> => {
      const { broker, credential } = resolveAdminOptions(flags, io.env);
      // Plans at scale keep their items in the admin database; connected only if one is made or run.
      const bulkStore = new LazyBulkPlanStore(resolveAdminDatabase(io.env));
      let service: RedriveService;
      try {
        service = new RedriveService({ ...(await serviceOptions(flags, ledger)), bulkStore });
      } catch (error) {
        if (error instanceof RedriveRefusedError) {
          const actor = credential?.principal ?? '(no credential)';
          const detail = error.message;
          await ledger.record({
            action: 'REFUSE',
            actor,
            transport: broker.kind,
            source: about?.source,
            outcome: error.guard,
            detail,
          });
        }
        throw error;
      }
      try {
        return await work(service);
      } finally {
        await service.close();
        await bulkStore.close();
      }
    };
  const context: CommandContext = {
    io,
    print: (lines) => io.out(lines.map((line) => `${line}\n`).join('')),
    withLedger,
    withAppendOnlyLedger,
    keyring: () => keyringOf(io),
    topology,
    withReader: async (flags, work) => {
      // Read-only: it writes no audit entry, so a login that could rewrite the log is not refused here.
      if (io.env[AdminEnv.DATABASE_URL]) return withLedger(onLedger(flags, work));
      const service = new RedriveService(await serviceOptions(flags, withoutLedger()));
      try {
        return await work(service);
      } finally {
        await service.close();
      }
    },
    withService: (flags, work, about) => withAppendOnlyLedger(flags, onLedger(flags, work, about)),
  };
  return context;
}

/** For read-only commands run without an admin database: any use of the ledger says what is missing. */
function withoutLedger(): RedriveLedger {
  const missing = (): never => {
    throw new CliUsageError(
      `This needs the admin database (${AdminEnv.DATABASE_URL}): the audit log and the approvals live there.`,
    );
  };
  return {
    record: async () => missing(),
    claimApproval: async () => missing(),
    withExclusiveHold: async () => missing(),
    plannerOf: async () => missing(),
    history: async () => missing(),
    verifyChain: async () => missing(),
    close: async () => undefined,
  };
}

async function keyringOf(io: CliIo): Promise<ApproverKeyring> {
  const file = io.env[AdminEnv.APPROVERS];
  return file ? ApproverKeyring.parse(await readJson(io, file)) : ApproverKeyring.empty();
}

/** `MESSAGING_ADMIN_CARRY_HEADERS`: the services' `deadLetter.carryHeaders`, comma-separated. */
function carryHeadersOf(io: CliIo): string[] {
  return (io.env[AdminEnv.CARRY_HEADERS] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}

/** `MESSAGING_ADMIN_READ_BUDGET_MIB`: the byte budget of a read of dead letters (default 16 MiB). */
function readBudgetOf(io: CliIo): number | undefined {
  try {
    return parseReadBudgetMib(io.env[AdminEnv.READ_BUDGET_MIB], AdminEnv.READ_BUDGET_MIB);
  } catch (error) {
    throw new CliUsageError((error as Error).message);
  }
}

function keySecretOf(io: CliIo) {
  const text = io.env[AdminEnv.KEY_SECRET];
  return text ? parseKeySecret(text, AdminEnv.KEY_SECRET) : undefined;
}

/** Adds `--allow-rewritable-audit`, for the commands that write the audit log (plan, approve, redrive). */
export function withAppendOnlyOption(command: Command): Command {
  return command.option(
    '--allow-rewritable-audit',
    `go on although the admin database login can rewrite the audit log (${AdminEnv.ALLOW_REWRITABLE_AUDIT}` +
      '=true): warned about, and recorded in every audit entry',
  );
}

/** Adds `--topology`, for the commands that derive a redrive's route. */
export function withTopologyOption(command: Command): Command {
  return command.option(
    '--topology <topology.json>',
    `the topology routes come from (${AdminEnv.TOPOLOGY}); needed when a DLQ name reads two ways`,
  );
}

/** Writes a file only its owner may read (a private key), refusing to overwrite one. */
export async function writePrivateFile(io: CliIo, file: string, text: string): Promise<void> {
  await fs.writeFile(path.resolve(io.cwd, file), text, { encoding: 'utf8', mode: 0o600, flag: 'wx' });
}

/** Adds the broker and admin options every broker command takes. */
export function withBrokerOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--transport <kind>', `kafka or rabbitmq (${AdminEnv.TRANSPORT})`).choices([
        'kafka',
        'rabbitmq',
      ]),
    )
    .option('--amqp-url <url>', `RabbitMQ URL without a password (${AdminEnv.AMQP_URL})`)
    .option('--kafka-brokers <list>', `Kafka brokers, comma-separated (${AdminEnv.KAFKA_BROKERS})`)
    .option('--kafka-sasl <mechanism>', `scram-sha-256, scram-sha-512 or plain (${AdminEnv.KAFKA_SASL})`)
    .option('--kafka-ssl', `connect to Kafka with TLS (${AdminEnv.KAFKA_SSL}=true)`)
    .option(
      '--local-plaintext',
      `local development (${AdminEnv.LOCAL_PLAINTEXT}=true): brokers on this machine only; Kafka without ` +
        'SASL or password; four eyes without an identity map',
    )
    .option(
      '--insecure-transport',
      `accept a broker not on this machine without TLS (${AdminEnv.INSECURE_TRANSPORT}=true, which also ` +
        'accepts such an admin database): passwords and messages in clear text',
    )
    .option(
      '--principal <name>',
      `admin user or principal (${AdminEnv.PRINCIPAL}); password in ${AdminEnv.PASSWORD}`,
    );
}
