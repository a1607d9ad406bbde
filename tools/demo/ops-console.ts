import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { generateApproverKeys, PostgresRedriveLedger } from 'nest-reliable-messaging/redrive';
import { hashPassword } from '../../apps/ops-console/src/auth/password-hash';
import { freePort } from '../infra/ports';
import { LOCAL_KEY_SECRET } from '../infra/local-secrets';
import { BuiltServices } from './build-services';
import { postgresServer } from './databases';
import { ServiceProcess } from './service-process';

/** A console user of the demo and the tests, with the password they sign in with. */
export interface DemoConsoleUser {
  readonly name: string;
  readonly roles: readonly ('viewer' | 'operator' | 'approver')[];
  readonly password: string;
}

/** The demo's console users: local development only (their passwords are in this file). */
export const DEMO_CONSOLE_USERS = [
  { name: 'alice', roles: ['operator'], password: 'alice-operator' },
  { name: 'bob', roles: ['approver'], password: 'bob-approver' },
  { name: 'olga', roles: ['operator', 'approver'], password: 'olga-operator-approver' },
  { name: 'victor', roles: ['viewer'], password: 'victor-viewer' },
] as const satisfies readonly DemoConsoleUser[];

/** Where the ops console finds the broker, the admin database and the services' metrics. */
export interface OpsConsoleSetup {
  readonly transport: 'kafka' | 'rabbitmq';
  readonly amqpUrl: string;
  readonly kafkaBrokers: readonly string[];
  /** The admin database (the ledger's tables migrated). */
  readonly adminDatabase: { readonly url: string; readonly schema?: string };
  readonly metrics: readonly { readonly name: string; readonly url: string }[];
  readonly deadLetterQueues: readonly string[];
  /** Approver keys are written under it; the log goes to `<dir>/ops-console.log`. */
  readonly dir: string;
  readonly users?: readonly DemoConsoleUser[];
  /** More of the console's environment, e.g. `CONSOLE_REFRESH_SECONDS`. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * The ops console's environment for local development, set up as production asks: the demo users
 * (scrypt-hashed); an approver key for each approver (written to `<dir>/approver-keys`, mode 0600, each
 * encrypted with a passphrase of its own); the reviewed keyring with the identity map (each user a person
 * whose account is their console name; the approvers' public keys), `<dir>/approvers.json`; the broker as
 * the local admin (Kafka: local development, no password).
 */
export async function opsConsoleEnv(setup: OpsConsoleSetup): Promise<Record<string, string>> {
  const users = setup.users ?? DEMO_CONSOLE_USERS;
  const keys = path.join(setup.dir, 'approver-keys');
  await fs.mkdir(keys, { recursive: true, mode: 0o700 });
  await fs.chmod(keys, 0o700);
  const passphrases: Record<string, string> = {};
  const people: Array<{ name: string; accounts: string[]; publicKey?: string }> = [];
  for (const user of users) {
    const person = { name: user.name, accounts: [user.name] };
    if (!user.roles.includes('approver')) {
      people.push(person);
      continue;
    }
    passphrases[user.name] = randomBytes(16).toString('base64url');
    const { privateKeyFile, publicKey } = generateApproverKeys(user.name, passphrases[user.name]);
    const file = path.join(keys, `${user.name}.approver-key.json`);
    await fs.writeFile(file, JSON.stringify(privateKeyFile), { mode: 0o600 });
    people.push({ ...person, publicKey: publicKey.publicKey });
  }
  const keyring = path.join(setup.dir, 'approvers.json');
  await fs.writeFile(keyring, JSON.stringify({ version: 2, people }, null, 2), { mode: 0o600 });
  const hashed = await Promise.all(
    users.map(async (u) => ({ name: u.name, roles: u.roles, passwordHash: await hashPassword(u.password) })),
  );
  const broker: Record<string, string> =
    setup.transport === 'rabbitmq'
      ? { MESSAGING_ADMIN_AMQP_URL: setup.amqpUrl }
      : {
          MESSAGING_ADMIN_KAFKA_BROKERS: setup.kafkaBrokers.join(','),
          MESSAGING_ADMIN_LOCAL_PLAINTEXT: 'true', // a local broker without SASL: no password to give
        };
  return {
    ...broker,
    MESSAGING_ADMIN_DATABASE_URL: setup.adminDatabase.url,
    ...(setup.adminDatabase.schema ? { MESSAGING_ADMIN_DATABASE_SCHEMA: setup.adminDatabase.schema } : {}),
    MESSAGING_KEY_SECRET: LOCAL_KEY_SECRET,
    CONSOLE_USERS: JSON.stringify(hashed),
    MESSAGING_ADMIN_APPROVERS: keyring,
    CONSOLE_APPROVER_KEYS: keys,
    CONSOLE_APPROVER_PASSPHRASES: JSON.stringify(passphrases),
    CONSOLE_DEAD_LETTER_QUEUES: setup.deadLetterQueues.join(','),
    CONSOLE_METRICS: setup.metrics.map((m) => `${m.name}=${m.url}`).join(','),
    // The local admin database's login is its superuser, which could rewrite the audit log: accepted for
    // local development (logged, and recorded in every entry); production gives the recipe's login.
    MESSAGING_ADMIN_ALLOW_REWRITABLE_AUDIT: 'true',
    ...setup.env,
  };
}

/** Starts the ops console as a process on a free port (or `port`) and waits until it answers. */
export async function startOpsConsole(
  build: BuiltServices,
  setup: OpsConsoleSetup,
  port?: number,
): Promise<ServiceProcess> {
  const env = await opsConsoleEnv(setup);
  const listenOn = port ?? (await freePort());
  const console = new ServiceProcess({
    name: 'ops-console',
    entry: build.entry('ops-console'),
    port: listenOn,
    logFile: path.join(setup.dir, 'ops-console.log'),
    env: { ...env, HOST: '127.0.0.1', PORT: String(listenOn) },
  });
  await console.start();
  return console;
}

/** The dead-letter queue of the demo's consumer group (`<destination>.<group>.dlq`). */
export const DEMO_DLQ = 'post-create.subscribe-service.dlq';

/** The admin database of local development: `messaging_admin` on the local PostgreSQL, migrated. */
export async function localAdminDatabase(postgresUrl: string): Promise<{ url: string; created: boolean }> {
  const server = postgresServer(postgresUrl);
  await server.check();
  const created = await server.ensure('messaging_admin');
  const url = server.serviceUrl('messaging_admin');
  await PostgresRedriveLedger.migrate({ url });
  return { url, created };
}

/** The lines that tell where the console is and who may sign in (demo users, local development only). */
export function consoleBanner(url: string): string[] {
  return [
    `Operations console: ${url}`,
    `  Demo users (local only): ${DEMO_CONSOLE_USERS.map((u) => `${u.name}/${u.password} (${u.roles.join('+')})`).join(', ')}`,
  ];
}
