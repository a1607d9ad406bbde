import { promises as fs } from 'node:fs';
import type { ConsoleMetricsSource } from 'nest-reliable-messaging/console';
import {
  AdminCredential,
  AdminDatabaseOptions,
  ApproverKeyring,
  ApproverSigner,
  checkAdminConnection,
  checkAdminDatabaseUrl,
  isLoopbackHost,
  parseKeySecret,
  parseReadBudgetMib,
  RedriveBroker,
  type KeySecret,
} from 'nest-reliable-messaging/redrive';
import type { MessagingTopology } from 'nest-reliable-messaging';
import { ConfiguredUser, parseConsoleUsers } from '../auth/environment-authenticator';
import { readTopology, readTrustedSigners } from './approver-signers';

type Env = Readonly<Record<string, string | undefined>>;

/** Everything the ops console reads from its environment (see docs/guide/09-console.md). */
export interface OpsConsoleConfig {
  readonly port: number;
  readonly host?: string;
  /** `CONSOLE_PATH`: where the console is mounted. Default `console`. */
  readonly path: string;
  readonly users: ConfiguredUser[];
  readonly approverSigners: ApproverSigner[];
  readonly keyring: ApproverKeyring;
  readonly deadLetterQueues: string[];
  readonly metricsSources: ConsoleMetricsSource[];
  /** `CONSOLE_SESSION_IDLE_MINUTES`: a session ends this long after its user's last request. Default 15. */
  readonly sessionIdleMs: number;
  /** `CONSOLE_SESSION_TTL_MINUTES`: a session ends this long after sign-in at the latest. Default 720. */
  readonly sessionTtlMs: number;
  /** `CONSOLE_REFRESH_SECONDS`: how often the overview, redrive and audit pages refresh themselves; 0 never. Default 30. */
  readonly pageRefreshSeconds: number;
  /** `CONSOLE_SECURE_COOKIES=true`: served over HTTPS only (`__Host-` cookies, HSTS). */
  readonly secureCookies: boolean;
  /** `CONSOLE_TRUST_PROXY`: Express's `trust proxy` (the client's address and HTTPS behind a proxy). */
  readonly trustProxy?: boolean | number | string;
  readonly topology?: MessagingTopology;
  readonly broker: RedriveBroker;
  readonly credential?: AdminCredential;
  readonly database: AdminDatabaseOptions;
  readonly keySecret?: KeySecret;
  /**
   * `MESSAGING_ADMIN_CARRY_HEADERS`: the services' `deadLetter.carryHeaders`, comma-separated (as for the CLI):
   * the headers besides the library's own that a redriven copy keeps.
   */
  readonly carryHeaders: readonly string[];
  /**
   * `MESSAGING_ADMIN_READ_BUDGET_MIB` (as for the CLI): MiB one read of dead letters holds at most, a page or
   * a plan; the page says how many more it did not show. Default: 16 MiB.
   */
  readonly readBudgetBytes?: number;
  /**
   * `MESSAGING_ADMIN_ALLOW_REWRITABLE_AUDIT=true`: start although the database login can rewrite the audit
   * log (logged as an error, recorded in every entry). Default false: the console refuses to start.
   */
  readonly allowRewritableAudit: boolean;
}

/** Reads and checks the environment; throws one error naming every variable that is wrong. */
export async function loadOpsConsoleConfig(env: Env = process.env): Promise<OpsConsoleConfig> {
  const need = (name: string): string => {
    const value = env[name]?.trim();
    if (!value) throw new Error(`${name} is required (see docs/guide/09-console.md).`);
    return value;
  };
  const list = (name: string) =>
    (env[name] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const { broker, credential } = brokerOf(env);
  // Local mode (no identity map, unencrypted approver keys) for brokers on this machine only, SASL or not:
  // refused before any key is read.
  checkAdminConnection(broker);
  const local = broker.allowPlaintextLocal === true;
  const keyring = env.MESSAGING_ADMIN_APPROVERS
    ? ApproverKeyring.parse(JSON.parse(await fs.readFile(env.MESSAGING_ADMIN_APPROVERS, 'utf8')))
    : ApproverKeyring.empty();
  const approverSigners = await readTrustedSigners(env, keyring, local);
  const databaseUrl = need('MESSAGING_ADMIN_DATABASE_URL');
  // Clear text to a database that is not on this machine only when asked for (the audit log, the password).
  const insecure = env.MESSAGING_ADMIN_INSECURE_TRANSPORT === 'true';
  checkAdminDatabaseUrl(databaseUrl, insecure);
  const deadLetterQueues = list('CONSOLE_DEAD_LETTER_QUEUES');
  if (deadLetterQueues.length === 0)
    throw new Error('CONSOLE_DEAD_LETTER_QUEUES is required: the DLQs to show.');
  const minutes = (name: string, fallback: number): number => {
    const value = Number(env[name] ?? String(fallback));
    if (!Number.isFinite(value) || value <= 0 || value > 24 * 60) {
      throw new Error(`${name} is a number of minutes from 1 to 1440.`);
    }
    return value;
  };
  const idleMinutes = minutes('CONSOLE_SESSION_IDLE_MINUTES', 15);
  const ttlMinutes = minutes('CONSOLE_SESSION_TTL_MINUTES', 12 * 60);
  const refreshSeconds = Number(env.CONSOLE_REFRESH_SECONDS ?? '30');
  if (!Number.isInteger(refreshSeconds) || refreshSeconds < 0 || refreshSeconds > 3600) {
    throw new Error('CONSOLE_REFRESH_SECONDS is a whole number of seconds from 0 (never) to 3600.');
  }
  const secureCookies = env.CONSOLE_SECURE_COOKIES === 'true';
  checkListenHost(env.HOST || undefined, secureCookies);
  return {
    port: Number(env.PORT ?? '3002'),
    host: env.HOST || undefined,
    path: env.CONSOLE_PATH || 'console',
    users: parseConsoleUsers(need('CONSOLE_USERS')),
    approverSigners,
    keyring,
    deadLetterQueues,
    metricsSources: list('CONSOLE_METRICS').map((entry) => {
      const at = entry.indexOf('=');
      if (at < 1)
        throw new Error(
          'CONSOLE_METRICS is a list of name=url, e.g. post-service=http://127.0.0.1:3000/metrics.',
        );
      return { name: entry.slice(0, at), url: entry.slice(at + 1) };
    }),
    sessionIdleMs: idleMinutes * 60_000,
    sessionTtlMs: ttlMinutes * 60_000,
    pageRefreshSeconds: refreshSeconds,
    secureCookies,
    trustProxy: trustProxyOf(env.CONSOLE_TRUST_PROXY),
    topology: await readTopology(env.MESSAGING_ADMIN_TOPOLOGY),
    broker,
    credential,
    database: {
      url: databaseUrl,
      schema: env.MESSAGING_ADMIN_DATABASE_SCHEMA || undefined,
      ...(insecure ? { allowInsecureTransport: true } : {}),
    },
    keySecret: env.MESSAGING_KEY_SECRET
      ? parseKeySecret(env.MESSAGING_KEY_SECRET, 'MESSAGING_KEY_SECRET')
      : undefined,
    carryHeaders: list('MESSAGING_ADMIN_CARRY_HEADERS'),
    readBudgetBytes: parseReadBudgetMib(
      env.MESSAGING_ADMIN_READ_BUDGET_MIB,
      'MESSAGING_ADMIN_READ_BUDGET_MIB',
    ),
    allowRewritableAudit: env.MESSAGING_ADMIN_ALLOW_REWRITABLE_AUDIT === 'true',
  };
}

/**
 * A console reachable from other machines is served over HTTPS with `secureCookies` (`__Host-` cookies,
 * `Secure`, HSTS): without, its cookies can be tossed from a sibling subdomain and sessions swapped, and the
 * passwords may cross the network in clear text (issue 45, finding 14). Behind a TLS proxy that holds too:
 * `CONSOLE_TRUST_PROXY` alone gives `Secure` cookies, not `__Host-` ones. On loopback (the default) no check.
 */
function checkListenHost(host: string | undefined, secureCookies: boolean): void {
  if (host === undefined || isLoopbackHost(host) || secureCookies) return;
  throw new Error(
    `HOST=${host} is not a loopback address: set CONSOLE_SECURE_COOKIES=true (the console's secureCookies: ` +
      '__Host- cookies, Secure, HSTS) and serve the console over HTTPS, directly or behind a TLS proxy ' +
      '(then also CONSOLE_TRUST_PROXY), or listen on 127.0.0.1 (see docs/guide/09-console.md).',
  );
}

/** The broker and the admin credential, from the same variables as the `nest-messaging` CLI. */
function brokerOf(env: Env): { broker: RedriveBroker; credential?: AdminCredential } {
  const amqpUrl = env.MESSAGING_ADMIN_AMQP_URL;
  const principal = (url?: URL) =>
    env.MESSAGING_ADMIN_PRINCIPAL ?? (url?.username ? decodeURIComponent(url.username) : undefined);
  const secret = (url?: URL) =>
    env.MESSAGING_ADMIN_PASSWORD ?? (url?.password ? decodeURIComponent(url.password) : undefined);
  const credentialOf = (url?: URL) => {
    const [p, s] = [principal(url), secret(url)];
    return p && s ? { principal: p, secret: s } : undefined;
  };
  // Local development (brokers on this machine): four eyes without an identity map, Kafka without SASL.
  const local =
    env.MESSAGING_ADMIN_LOCAL_PLAINTEXT === 'true' || env.MESSAGING_ADMIN_KAFKA_LOCAL_PLAINTEXT === 'true';
  // A broker not on this machine without TLS (amqp://, Kafka without ssl): refused unless asked for.
  const insecure = env.MESSAGING_ADMIN_INSECURE_TRANSPORT === 'true';
  if (amqpUrl) {
    const url = new URL(amqpUrl);
    return {
      broker: {
        kind: 'rabbitmq',
        url: amqpUrl,
        allowPlaintextLocal: local,
        allowInsecureTransport: insecure,
      },
      credential: credentialOf(url),
    };
  }
  const brokers = (env.MESSAGING_ADMIN_KAFKA_BROKERS ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  if (brokers.length === 0) {
    throw new Error(
      'Give the broker: MESSAGING_ADMIN_AMQP_URL (RabbitMQ) or MESSAGING_ADMIN_KAFKA_BROKERS (Kafka).',
    );
  }
  const sasl = env.MESSAGING_ADMIN_KAFKA_SASL as 'plain' | 'scram-sha-256' | 'scram-sha-512' | undefined;
  const noPassword = local && !sasl;
  return {
    broker: {
      kind: 'kafka',
      brokers,
      sasl,
      ssl: env.MESSAGING_ADMIN_KAFKA_SSL === 'true',
      allowPlaintextLocal: local,
      allowInsecureTransport: insecure,
    },
    credential: noPassword
      ? { principal: principal() ?? 'local-console', secret: secret() ?? '' }
      : credentialOf(),
  };
}

/** `CONSOLE_TRUST_PROXY` as Express takes it: `true`, a number of hops, or addresses. */
function trustProxyOf(value: string | undefined): boolean | number | string | undefined {
  if (!value) return undefined;
  if (value === 'true') return true;
  return /^\d+$/.test(value) ? Number(value) : value;
}
