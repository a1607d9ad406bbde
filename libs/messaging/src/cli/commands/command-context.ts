import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { parseKeySecret } from '../../dead-letter/key-secret';
import { ApproverKeyring } from '../../dead-letter/redrive/approvals/approver-keyring';
import { RedriveRefusedError } from '../../dead-letter/redrive/errors/redrive-refused.error';
import { PostgresRedriveLedger } from '../../dead-letter/redrive/ledger/postgres-redrive-ledger';
import { RedriveLedger } from '../../dead-letter/redrive/ledger/redrive-ledger.interface';
import { RedriveService } from '../../dead-letter/redrive/redrive.service';
import { AdminEnv, BrokerFlags, resolveAdminDatabase, resolveAdminOptions } from '../admin-options';
import { CliIo, readJson } from '../cli-io';

/** What every command runs with. */
export interface CommandContext {
  readonly io: CliIo;
  /** Prints lines to standard output. */
  print(lines: readonly string[]): void;
  /** Runs `work` with the admin database's ledger, then closes it. */
  withLedger<T>(work: (ledger: RedriveLedger) => Promise<T>): Promise<T>;
  /**
   * Runs `work` with a `RedriveService` built from the flags and environment (broker, admin credential,
   * approver keyring, key secret, ledger), then closes it. A refusal to build one is recorded too.
   */
  withService<T>(
    flags: BrokerFlags,
    work: (service: RedriveService) => Promise<T>,
    about?: { readonly source?: string },
  ): Promise<T>;
}

/** A context over `io`. */
export function commandContext(io: CliIo): CommandContext {
  const withLedger = async <T>(work: (ledger: RedriveLedger) => Promise<T>): Promise<T> => {
    const ledger = await PostgresRedriveLedger.connect(resolveAdminDatabase(io.env));
    try {
      return await work(ledger);
    } finally {
      await ledger.close();
    }
  };
  return {
    io,
    print: (lines) => io.out(lines.map((line) => `${line}\n`).join('')),
    withLedger,
    withService: (flags, work, about) =>
      withLedger(async (ledger) => {
        const { broker, credential } = resolveAdminOptions(flags, io.env);
        let service: RedriveService;
        try {
          service = new RedriveService({
            broker,
            credential,
            ledger,
            approvers: await keyringOf(io),
            keySecret: keySecretOf(io),
            clock: io.now,
          });
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
        }
      }),
  };
}

async function keyringOf(io: CliIo): Promise<ApproverKeyring> {
  const file = io.env[AdminEnv.APPROVERS];
  return file ? ApproverKeyring.parse(await readJson(io, file)) : ApproverKeyring.empty();
}

function keySecretOf(io: CliIo) {
  const text = io.env[AdminEnv.KEY_SECRET];
  return text ? parseKeySecret(text, AdminEnv.KEY_SECRET) : undefined;
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
    .option('--local-plaintext', 'allow a Kafka broker without SASL on this machine (local development)')
    .option(
      '--principal <name>',
      `admin user or principal (${AdminEnv.PRINCIPAL}); password in ${AdminEnv.PASSWORD}`,
    );
}
