import { z } from 'zod';
import { RelayMode, TopologyMode, TransportOptions } from 'nest-reliable-messaging';
import { InvalidEnvironmentError } from './invalid-environment.error';

/** What every demo service reads from its environment, validated, with defaults for the local services. */
export interface ServiceEnvironment {
  /** The service's name (logs, broker client id). */
  readonly serviceName: string;
  /** HTTP port (`PORT`). */
  readonly port: number;
  /** HTTP interface (`HOST`). Default: every interface. */
  readonly host?: string;
  readonly database: {
    /**
     * `DATABASE_URL`: `postgres://…`, or `mysql://…` / `mariadb://…` naming the service's database. Default:
     * the service's own database on the local PostgreSQL server.
     */
    readonly url: string;
    /** TypeORM's type, from the URL's scheme. */
    readonly type: ServiceDatabaseType;
    /** `DATABASE_SCHEMA` (PostgreSQL only): keep the service's tables in this schema (it must exist). Default: `public`. */
    readonly schema?: string;
  };
  /**
   * `MESSAGING_TRANSPORT` (kafka | rabbitmq) with `KAFKA_BROKERS` (and `KAFKA_SESSION_TIMEOUT_MS`, how soon
   * a consumer group hands a vanished member's partitions on; the library's default when unset; the service's
   * own SASL login in `KAFKA_SASL_MECHANISM`, `KAFKA_USERNAME`, `KAFKA_PASSWORD`, TLS with `KAFKA_SSL=true`)
   * or `AMQP_URL` (and `AMQP_QUEUE_TYPE`: `classic`, the library's default, or `quorum` on a cluster).
   */
  readonly transport: TransportOptions;
  /** `RELAY_LEASE_MS`: how long a relay claim is held before another process may take it over. */
  readonly relayLeaseMs?: number;
  /**
   * `RELAY_MODE`: `poll` (the library's default: the outbox table) or `logical` (PostgreSQL's log through a
   * replication slot; `wal_level = logical` and `nest-messaging relay slot create` first).
   */
  readonly relayMode?: RelayMode;
  /**
   * `MESSAGING_TOPOLOGY`: `verify` (default: the broker objects are declared by `messaging topology apply`,
   * the service only checks them) or `declare` (the service declares them: local development only).
   */
  readonly topology: TopologyMode;
  /** `MESSAGING_KEY_SECRET`: the key secret of dead-letter copies (required by a service that consumes). */
  readonly keySecret?: string;
}

/** The databases a service runs on: PostgreSQL, MySQL, MariaDB (TypeORM's type names). */
export type ServiceDatabaseType = 'postgres' | 'mysql' | 'mariadb';

/** Per-service defaults. */
export interface ServiceDefaults {
  serviceName: string;
  port: number;
  /** The database the service uses on the local server when `DATABASE_URL` is not set. */
  database: string;
}

const LOCAL_SERVER = 'postgres://postgres@127.0.0.1:5432';
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
const BROKER = /^[^\s:,]+:\d{1,5}$/;

const schema = (defaults: ServiceDefaults) =>
  z
    .object({
      PORT: z.coerce
        .number({ error: 'must be a port number' })
        .int('must be a whole number')
        .min(1, 'must be between 1 and 65535')
        .max(65_535, 'must be between 1 and 65535')
        .default(defaults.port),
      HOST: z.string().min(1, 'must not be empty').optional(),
      DATABASE_URL: z
        .string()
        .regex(/^(postgres(ql)?|mysql|mariadb):\/\/\S+$/, 'must be a postgres://, mysql:// or mariadb:// URL')
        .default(`${LOCAL_SERVER}/${defaults.database}`),
      DATABASE_SCHEMA: z
        .string()
        .regex(IDENTIFIER, 'must be a lower-case SQL identifier (letters, digits, _)')
        .optional(),
      MESSAGING_TRANSPORT: z
        .enum(['kafka', 'rabbitmq'], { error: "must be 'kafka' or 'rabbitmq'" })
        .default('kafka'),
      KAFKA_BROKERS: z
        .string()
        .default('127.0.0.1:9092')
        .transform((list) => list.split(',').map((b) => b.trim()))
        .refine(
          (brokers) => brokers.every((b) => BROKER.test(b)),
          'must be a comma-separated list of host:port',
        ),
      AMQP_URL: z
        .string()
        .regex(/^amqps?:\/\/\S+$/, 'must be an amqp:// or amqps:// URL')
        .default('amqp://guest:guest@127.0.0.1:5672'),
      AMQP_QUEUE_TYPE: z.enum(['classic', 'quorum'], { error: "must be 'classic' or 'quorum'" }).optional(),
      KAFKA_SASL_MECHANISM: z
        .enum(['plain', 'scram-sha-256', 'scram-sha-512'], {
          error: "must be 'scram-sha-256', 'scram-sha-512' or 'plain'",
        })
        .optional(),
      KAFKA_USERNAME: z.string().optional(),
      KAFKA_PASSWORD: z.string().optional(),
      KAFKA_SSL: z.enum(['true', 'false'], { error: "must be 'true' or 'false'" }).default('false'),
      KAFKA_SESSION_TIMEOUT_MS: z.coerce
        .number({ error: 'must be a number of milliseconds' })
        .int('must be a whole number of milliseconds')
        .min(6_000, 'must be at least 6000 (the broker refuses less)')
        .optional(),
      MESSAGING_TOPOLOGY: z
        .enum(['declare', 'verify'], { error: "must be 'declare' or 'verify'" })
        .default('verify'),
      MESSAGING_KEY_SECRET: z.string().optional(),
      RELAY_LEASE_MS: z.coerce
        .number({ error: 'must be a number of milliseconds' })
        .int('must be a whole number of milliseconds')
        .min(1_000, 'must be at least 1000')
        .optional(),
      RELAY_MODE: z.enum(['poll', 'logical'], { error: "must be 'poll' or 'logical'" }).optional(),
    })
    .refine((e) => !e.KAFKA_SASL_MECHANISM || (e.KAFKA_USERNAME && e.KAFKA_PASSWORD), {
      message: 'needs KAFKA_USERNAME and KAFKA_PASSWORD',
      path: ['KAFKA_SASL_MECHANISM'],
    });

/** DATABASE_SCHEMA and RELAY_MODE=logical are PostgreSQL's: MySQL and MariaDB name the database in the URL. */
const withDatabaseChecks = (defaults: ServiceDefaults) =>
  schema(defaults)
    .refine((e) => !e.DATABASE_SCHEMA || databaseType(e.DATABASE_URL) === 'postgres', {
      path: ['DATABASE_SCHEMA'],
      message: 'is for PostgreSQL only: on MySQL and MariaDB name the database in DATABASE_URL',
    })
    .refine((e) => e.RELAY_MODE !== 'logical' || databaseType(e.DATABASE_URL) === 'postgres', {
      path: ['RELAY_MODE'],
      message: "logical reads PostgreSQL's log: MySQL and MariaDB keep the polling relay (poll)",
    });

/** TypeORM's type for a database URL of one of the accepted schemes. */
function databaseType(url: string): ServiceDatabaseType {
  const scheme = url.slice(0, url.indexOf(':'));
  return scheme === 'mysql' || scheme === 'mariadb' ? scheme : 'postgres';
}

/**
 * Reads the service's environment. Empty variables count as unset. Throws `InvalidEnvironmentError` naming
 * every bad variable, so a misconfigured service stops before it connects to anything.
 */
export function readServiceEnvironment(
  env: NodeJS.ProcessEnv,
  defaults: ServiceDefaults,
): ServiceEnvironment {
  const given = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = withDatabaseChecks(defaults).safeParse(given);
  if (!parsed.success) {
    throw new InvalidEnvironmentError(
      defaults.serviceName,
      parsed.error.issues.map((issue) => {
        const variable = String(issue.path[0] ?? '(environment)');
        const value = given[variable];
        return {
          variable,
          value: value === undefined ? undefined : maskPassword(value),
          problem: issue.message,
        };
      }),
    );
  }
  const e = parsed.data;
  return {
    serviceName: defaults.serviceName,
    port: e.PORT,
    host: e.HOST,
    database: { url: e.DATABASE_URL, type: databaseType(e.DATABASE_URL), schema: e.DATABASE_SCHEMA },
    transport:
      e.MESSAGING_TRANSPORT === 'kafka'
        ? {
            kind: 'kafka',
            brokers: e.KAFKA_BROKERS,
            ...(e.KAFKA_SESSION_TIMEOUT_MS ? { sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS } : {}),
            ...(e.KAFKA_SASL_MECHANISM
              ? {
                  sasl: {
                    mechanism: e.KAFKA_SASL_MECHANISM,
                    username: e.KAFKA_USERNAME as string,
                    password: e.KAFKA_PASSWORD as string,
                  },
                }
              : {}),
            ...(e.KAFKA_SSL === 'true' ? { ssl: true } : {}),
          }
        : {
            kind: 'rabbitmq',
            url: e.AMQP_URL,
            ...(e.AMQP_QUEUE_TYPE ? { queueType: e.AMQP_QUEUE_TYPE } : {}),
          },
    relayLeaseMs: e.RELAY_LEASE_MS,
    relayMode: e.RELAY_MODE,
    topology: e.MESSAGING_TOPOLOGY,
    keySecret: e.MESSAGING_KEY_SECRET,
  };
}

/**
 * `scheme://user:secret@host` → `scheme://user:***@host`. The user info runs to the last `@`, since a
 * password may hold `@` (or `/`, when not encoded); a URL it cannot tell apart is masked whole.
 */
export function maskPassword(url: string): string {
  const start = url.indexOf('://');
  const at = url.lastIndexOf('@');
  if (start < 0 || at < start) return url;
  const userInfo = url.slice(start + 3, at);
  const colon = userInfo.indexOf(':');
  if (colon < 0) return url;
  return `${url.slice(0, start + 3)}${userInfo.slice(0, colon)}:***${url.slice(at)}`;
}
