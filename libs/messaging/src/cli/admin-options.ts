import { userInfo } from 'node:os';
import {
  AdminCredential,
  checkAdminDatabaseUrl,
  KafkaRedriveBroker,
  RedriveBroker,
} from '../redrive/admin-connection';
import { AdminDatabaseOptions } from '../redrive/ledger/postgres-redrive-ledger';
import { CliUsageError } from './cli-usage.error';

/**
 * Environment variables of the admin CLI. Deliberately not the application's (`AMQP_URL`, `KAFKA_BROKERS`):
 * the CLI never falls back to the runtime's credential. Secrets come from here only, never from flags
 * (a flag shows in `ps` and in shell history).
 */
export const AdminEnv = {
  TRANSPORT: 'MESSAGING_ADMIN_TRANSPORT',
  /** The broker, and optionally the admin user: `amqp://admin:secret@host:5672/vhost`. */
  AMQP_URL: 'MESSAGING_ADMIN_AMQP_URL',
  KAFKA_BROKERS: 'MESSAGING_ADMIN_KAFKA_BROKERS',
  /** `scram-sha-256`, `scram-sha-512`, or `plain` (with TLS only). */
  KAFKA_SASL: 'MESSAGING_ADMIN_KAFKA_SASL',
  KAFKA_SSL: 'MESSAGING_ADMIN_KAFKA_SSL',
  PRINCIPAL: 'MESSAGING_ADMIN_PRINCIPAL',
  /** The admin password. */
  PASSWORD: 'MESSAGING_ADMIN_PASSWORD',
  /** The admin database: audit log, used approvals, exclusive holds. */
  DATABASE_URL: 'MESSAGING_ADMIN_DATABASE_URL',
  DATABASE_SCHEMA: 'MESSAGING_ADMIN_DATABASE_SCHEMA',
  /** The reviewed keyring (JSON): the approvers' public keys and, version 2, the identity map. */
  APPROVERS: 'MESSAGING_ADMIN_APPROVERS',
  /** The topology file (`topology.json`): redrive routes come from its groups. */
  TOPOLOGY: 'MESSAGING_ADMIN_TOPOLOGY',
  /** `true`: local development, as `--local-plaintext`. */
  LOCAL_PLAINTEXT: 'MESSAGING_ADMIN_LOCAL_PLAINTEXT',
  /**
   * `true`, as `--insecure-transport`: accept a broker or admin database that is not on this machine without
   * TLS (passwords and messages in clear text). Default: refused.
   */
  INSECURE_TRANSPORT: 'MESSAGING_ADMIN_INSECURE_TRANSPORT',
  /**
   * `true`, as `--allow-rewritable-audit`: plan, approve and redrive although the admin database login can
   * rewrite the audit log (recorded in every entry as `rewrite-rights`). Default: refused.
   */
  ALLOW_REWRITABLE_AUDIT: 'MESSAGING_ADMIN_ALLOW_REWRITABLE_AUDIT',
  /** Header names a redriven copy keeps besides the library's own: the services' `deadLetter.carryHeaders`, comma-separated. */
  CARRY_HEADERS: 'MESSAGING_ADMIN_CARRY_HEADERS',
  /**
   * MiB one read of dead letters (a plan's read) holds at most, bodies and headers together (default 16): a
   * read stops there and the plan says how many it did not read.
   */
  READ_BUDGET_MIB: 'MESSAGING_ADMIN_READ_BUDGET_MIB',
  /** The services' key secret: restores real keys on redrive. */
  KEY_SECRET: 'MESSAGING_KEY_SECRET',
  /** Opens an approver's encrypted private key. */
  APPROVER_KEY_PASSPHRASE: 'MESSAGING_APPROVER_KEY_PASSPHRASE',
} as const;

/** Broker flags every broker command of `nest-messaging` takes. */
export interface BrokerFlags {
  readonly transport?: string;
  readonly amqpUrl?: string;
  readonly kafkaBrokers?: string;
  readonly kafkaSasl?: string;
  readonly kafkaSsl?: boolean;
  /**
   * Local development: brokers on this machine only; Kafka without SASL and without a password; four eyes
   * without an identity map.
   */
  readonly localPlaintext?: boolean;
  /** Accept brokers not on this machine without TLS (`--insecure-transport`). */
  readonly insecureTransport?: boolean;
  readonly principal?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

const SASL = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;

/**
 * The broker and admin credential from flags, then the environment. The credential may be missing. In local
 * development (`--local-plaintext`) a missing principal is RabbitMQ's local `guest` (with its password) or,
 * on Kafka without SASL, the operating-system user (no password: nothing checks it).
 */
export function resolveAdminOptions(
  flags: BrokerFlags,
  env: Env,
): { broker: RedriveBroker; credential: AdminCredential | undefined } {
  if (flags.amqpUrl !== undefined && parseUrl(flags.amqpUrl, '--amqp-url').password) {
    throw new CliUsageError(
      `--amqp-url must not carry a password: give it in ${AdminEnv.PASSWORD} (or in ${AdminEnv.AMQP_URL}).`,
    );
  }
  const local = flags.localPlaintext === true || env[AdminEnv.LOCAL_PLAINTEXT] === 'true';
  const insecure = flags.insecureTransport === true || env[AdminEnv.INSECURE_TRANSPORT] === 'true';
  const { amqpUrl, kafkaBrokers } = local ? localBroker(flags, env) : givenBroker(flags, env);
  const transport =
    flags.transport ?? env[AdminEnv.TRANSPORT] ?? (amqpUrl ? 'rabbitmq' : kafkaBrokers ? 'kafka' : '');
  const fromUrl = transport === 'rabbitmq' && amqpUrl ? userOf(parseUrl(amqpUrl, AdminEnv.AMQP_URL)) : {};
  const principal = flags.principal ?? (env[AdminEnv.PRINCIPAL] || fromUrl.principal);
  const secret = env[AdminEnv.PASSWORD] || fromUrl.secret;
  const credential = principal && secret ? { principal, secret } : undefined;
  if (transport === 'rabbitmq') {
    if (!amqpUrl) throw new CliUsageError(`Give the RabbitMQ URL: --amqp-url or ${AdminEnv.AMQP_URL}.`);
    const localGuest = local && !principal ? { principal: 'guest', secret: 'guest' } : undefined;
    return {
      broker: {
        kind: 'rabbitmq',
        url: amqpUrl,
        allowPlaintextLocal: local,
        ...(insecure ? { allowInsecureTransport: true } : {}),
      },
      credential: credential ?? localGuest,
    };
  }
  if (transport === 'kafka') {
    const brokers = (kafkaBrokers ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean);
    if (brokers.length === 0) {
      throw new CliUsageError(`Give the Kafka brokers: --kafka-brokers or ${AdminEnv.KAFKA_BROKERS}.`);
    }
    const broker = kafkaBroker(brokers, flags, env, local, insecure);
    const noPassword = local && !broker.sasl;
    const localUser = noPassword
      ? { principal: principal || userInfo().username, secret: secret ?? '' }
      : undefined;
    return { broker, credential: localUser ?? credential };
  }
  throw new CliUsageError(
    `Say which broker: ${AdminEnv.AMQP_URL} (RabbitMQ) or ${AdminEnv.KAFKA_BROKERS} (Kafka), or --transport.`,
  );
}

/** The broker the flags or the admin variables name (never the application's variables). */
function givenBroker(flags: BrokerFlags, env: Env): { amqpUrl?: string; kafkaBrokers?: string } {
  return {
    amqpUrl: flags.amqpUrl ?? env[AdminEnv.AMQP_URL],
    kafkaBrokers: flags.kafkaBrokers ?? env[AdminEnv.KAFKA_BROKERS],
  };
}

/**
 * Local development: the broker the flags or admin variables name, else the one the application on this
 * machine uses (`AMQP_URL`, `KAFKA_BROKERS`), else the local Kafka broker (127.0.0.1:9092). Only here does the
 * CLI read the application's variables: the broker must be on this machine, and it holds no production secret.
 */
function localBroker(flags: BrokerFlags, env: Env): { amqpUrl?: string; kafkaBrokers?: string } {
  const given = givenBroker(flags, env);
  if (given.amqpUrl || given.kafkaBrokers) return given;
  const wanted = flags.transport ?? env[AdminEnv.TRANSPORT];
  const amqpUrl = wanted !== 'kafka' ? env.AMQP_URL || undefined : undefined;
  if (amqpUrl || wanted === 'rabbitmq') return { amqpUrl: amqpUrl ?? LOCAL_AMQP_URL };
  return { kafkaBrokers: env.KAFKA_BROKERS || LOCAL_KAFKA_BROKERS };
}

/** The local brokers of a development machine, as the five-minute example's defaults. */
const LOCAL_KAFKA_BROKERS = '127.0.0.1:9092';
const LOCAL_AMQP_URL = 'amqp://127.0.0.1:5672';

/**
 * The admin database from the environment; refuses to go on without one (the audit log lives there), or
 * with one that is not on this machine and not reached over TLS, unless `MESSAGING_ADMIN_INSECURE_TRANSPORT`.
 */
export function resolveAdminDatabase(env: Env): AdminDatabaseOptions {
  const url = env[AdminEnv.DATABASE_URL];
  if (!url) {
    throw new CliUsageError(
      `Give the admin database in ${AdminEnv.DATABASE_URL} (postgres://…): the audit log, the used ` +
        `approvals and the exclusive holds live there (schema: ${AdminEnv.DATABASE_SCHEMA}).`,
    );
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new CliUsageError(`${AdminEnv.DATABASE_URL} must be a postgres:// URL (its value is not shown).`);
  }
  const insecure = env[AdminEnv.INSECURE_TRANSPORT] === 'true';
  checkAdminDatabaseUrl(url, insecure);
  return {
    url,
    schema: env[AdminEnv.DATABASE_SCHEMA] || undefined,
    ...(insecure ? { allowInsecureTransport: true } : {}),
  };
}

function kafkaBroker(
  brokers: string[],
  flags: BrokerFlags,
  env: Env,
  local: boolean,
  insecure: boolean,
): KafkaRedriveBroker {
  const sasl = flags.kafkaSasl ?? env[AdminEnv.KAFKA_SASL];
  if (sasl !== undefined && !SASL.includes(sasl as (typeof SASL)[number])) {
    throw new CliUsageError(`Unknown SASL mechanism; use one of ${SASL.join(', ')}.`);
  }
  const ssl = flags.kafkaSsl ?? env[AdminEnv.KAFKA_SSL] === 'true';
  return {
    kind: 'kafka',
    brokers,
    sasl: sasl as KafkaRedriveBroker['sasl'],
    ssl,
    allowPlaintextLocal: local,
    ...(insecure ? { allowInsecureTransport: true } : {}),
  };
}

/** Parses a URL; an unparsable one is named by where it came from, never echoed (it may hold a password). */
function parseUrl(url: string, origin: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new CliUsageError(`The URL in ${origin} is not a valid URL (its value is not shown).`);
  }
}

function userOf(parsed: URL): { principal?: string; secret?: string } {
  return {
    principal: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    secret: parsed.password ? decodeURIComponent(parsed.password) : undefined,
  };
}
