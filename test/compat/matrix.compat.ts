/**
 * Issue 13's compatibility matrix (`npm run test:compat`): the packed library installed into fresh apps made
 * by `nest new` (stock templates, `isolatedModules` on) outside the workspace, built with each app's own
 * toolchain and run on the cell's Node against the real PostgreSQL and broker, with the README's five-minute
 * example as their code. Two cells (one per broker) then run guide 08's local redrive as written, in a shell,
 * plan to execute, on an order the example dead-lettered (issue 37, item 3).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { REPO_ROOT } from '../../tools/demo/build-services';
import { databaseUrl, ensureDatabase } from '../../tools/demo/databases';
import { buildLibrary, LIBRARY_DIR } from '../../tools/infra/library-build';
import { KafkaBroker } from '../../tools/infra/kafka-broker';
import { LOCAL_KEY_SECRET } from '../../tools/infra/local-secrets';
import { pinnedKafkaVersion } from '../../tools/infra/kafka-jars';
import { infraEnv } from '../harness/infra';
import { startPrivateBroker } from '../harness/kafka';
import { uniqueName } from '../harness/names';
import { RabbitVhost } from '../integration/redrive/support/rabbit-vhost';
import { CompatCell, ConsumerApp } from './support/consumer-app';
import { runLocalRedrive } from './support/local-redrive';
import { nestCli } from '../../tools/infra/tool-cache';

const run = promisify(execFile);

/** The five-minute example's topology, as its README applies it: OrderPlaced's destination and the billing group. */
const TOPOLOGY_FILE = path.join(REPO_ROOT, 'examples', 'five-minute', 'topology.json');

const ALL_CELLS: readonly CompatCell[] = [
  // The stack most applications run today: Nest 11 (CommonJS), TypeORM 0.3, on Node 20.
  {
    name: 'nest11-cjs',
    node: 20,
    nest: 11,
    typeorm: '0.3',
    transport: 'kafka',
    extraPeers: ['prom-client'],
    localRedrive: true,
  },
  // The current major: Nest 12 (ESM only), TypeORM 1, Node 24; no optional peer but the transport's client.
  // Also compiles guide 09's console module (issue 37, item 5) and guide 17's tenants example (issue 43)
  // against the package.
  {
    name: 'nest12-esm',
    node: 24,
    nest: 12,
    typeorm: '1',
    transport: 'rabbitmq',
    extraPeers: [],
    localRedrive: true,
    opsConsole: true,
    tenantsExample: true,
  },
  // Node 22 with Nest 12 and TypeORM 0.3, every optional peer installed.
  {
    name: 'nest12-node22',
    node: 22,
    nest: 12,
    typeorm: '0.3',
    transport: 'kafka',
    extraPeers: ['prom-client', '@opentelemetry/api', '@nestjs/microservices@12'],
  },
  // Node 26, the current release (issue 44): Nest 12 and TypeORM 1, over Kafka.
  {
    name: 'nest12-node26',
    node: 26,
    nest: 12,
    typeorm: '1',
    transport: 'kafka',
    extraPeers: ['prom-client'],
  },
  // A Nest monorepo (`nest generate app billing` after `nest new`): the package installed at the root, the
  // example in the second app, each app bundled by the CLI's builder (rspack in Nest 12).
  {
    name: 'nest12-monorepo',
    node: 24,
    nest: 12,
    typeorm: '1',
    transport: 'rabbitmq',
    extraPeers: [],
    monorepoApp: 'billing',
  },
];

/** `COMPAT_CELLS=nest12-esm,nest11-cjs` runs those cells only (all of them by default, as CI does). */
const CELLS = ALL_CELLS.filter(
  (cell) => !process.env.COMPAT_CELLS || process.env.COMPAT_CELLS.split(',').includes(cell.name),
);

interface Row {
  readonly cell: string;
  readonly versions: Record<string, string>;
  readonly result: Record<string, unknown>;
}

const rows: Row[] = [];
let tarball = '';
let workDir = '';
/**
 * Each cell's app, generated, installed and built: the three are prepared side by side from the start (most
 * of it waits on the registry and the disk), and each test waits for its own.
 */
const prepared = new Map<string, Promise<ConsumerApp>>();
/** How long each cell's `nest new`, install and build took (the newcomer path's first step). */
const preparedInMs = new Map<string, number>();

/** A local-redrive cell's app, services and dead-lettered order, kept from its first test for the second. */
interface Kept {
  readonly app: ConsumerApp;
  readonly services: CellServices;
  readonly deadLetteredOrder: number;
  /** Minutes of the newcomer path so far: prepared, topology applied, the first message handled. */
  readonly toFirstHandledMs: number;
}
const kept = new Map<string, Kept>();

/** At most `size` holders at a time; `acquire()` resolves with the function that gives the place back. */
class Semaphore {
  private readonly waiting: Array<() => void> = [];
  private held = 0;

  constructor(private readonly size: number) {}

  async acquire(): Promise<() => void> {
    if (this.held >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.held--;
    };
  }
}

/**
 * The cells' tests run side by side, at most `COMPAT_PARALLEL` (default 2) at a time, each as soon as its app
 * is prepared: a cell mostly waits (its private broker's boot, a retry's backoff, a reminder until it is due,
 * processes starting), and one after the other the five left the matrix's worker idle for minutes. Every cell
 * has its own app folder, database and broker (a private Kafka broker or a RabbitMQ vhost). A cell's services
 * are released in the background; afterAll waits for every release (a failed one fails the suite).
 */
const PARALLEL = Math.max(1, Number(process.env.COMPAT_PARALLEL ?? 2) || 1);
const slots = new Semaphore(PARALLEL);
const releases: Array<Promise<void>> = [];

/** Releases `services` without waiting (afterAll does). */
function releaseLater(services: CellServices): void {
  const released = services.release();
  released.catch(() => undefined);
  releases.push(released);
}

beforeAll(async () => {
  await buildLibrary();
  workDir = mkdtempSync(path.join(os.tmpdir(), 'compat-'));
  // Packed as built (no prepack rebuild): a rebuild empties dist/ while other suites of the run import it.
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', workDir], {
    cwd: LIBRARY_DIR,
  });
  tarball = path.join(workDir, (JSON.parse(stdout) as Array<{ filename: string }>)[0].filename);
  for (const cell of CELLS) {
    const app = prepare(cell);
    app.catch(() => undefined); // reported by the cell's own test
    prepared.set(cell.name, app);
  }
}, 120_000);

async function prepare(cell: CompatCell): Promise<ConsumerApp> {
  const startedAt = Date.now();
  const app = await ConsumerApp.generate(cell, workDir);
  const generatedAt = Date.now();
  await app.install(tarball);
  const installedAt = Date.now();
  await app.build();
  preparedInMs.set(cell.name, Date.now() - startedAt);
  process.stderr.write(
    `${cell.name}: prepared in ${seconds(Date.now() - startedAt)} s (nest new ${seconds(generatedAt - startedAt)} s, ` +
      `install ${seconds(installedAt - generatedAt)} s, build ${seconds(Date.now() - installedAt)} s)\n`,
  );
  return app;
}

afterAll(async () => {
  for (const { services } of kept.values()) await services.release().catch(() => undefined);
  const released = await Promise.allSettled(releases);
  process.stderr.write(`\n${matrixTable(rows)}\n`);
  if (workDir) await fs.rm(workDir, { recursive: true, force: true, maxRetries: 5 });
  const failed = released.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
  if (failed.length > 0) throw new Error(`Releasing a cell's services failed: ${failed.join('; ')}`);
}, 120_000);

describe('the packed library in fresh Nest apps (compatibility matrix)', () => {
  // claim: C-1, C-2, C-3, C-5, C-6, C-7, C-108
  it.concurrent.each(CELLS.map((cell) => [cell.name, cell] as const))(
    '%s: installs, builds with the stock tsconfig, and runs the five-minute example',
    async (_name, cell) => {
      const app = await (prepared.get(cell.name) as Promise<ConsumerApp>);
      const slot = await slots.acquire();
      let services: CellServices | undefined;
      let keep = false;
      try {
        services = await servicesFor(cell);
        const startedAt = Date.now();
        const withoutKafkajs =
          cell.transport !== 'kafka' && !cell.extraPeers.includes('@nestjs/microservices@12');
        // The README's local-development commands, as typed there: before the application starts (it only
        // checks the topology), and after it ran.
        await app.cli(['topology', 'apply', '--file', TOPOLOGY_FILE, '--local-plaintext'], services.localEnv);
        const result = await app.check({
          ...services.env,
          ...(withoutKafkajs ? { COMPAT_WITHOUT_KAFKAJS: '1' } : {}),
        });
        expect(result).toMatchObject({
          billedOnAttempt: 2, // the handler failed once and the retry policy ran it again
          failedAttempts: 1,
          receiptsSent: [result.firstOrder, (result.firstOrder as number) + 1],
          invoices: 2,
        });
        expect(result.duplicatesSuppressed).toBeGreaterThanOrEqual(1); // the republished message did nothing
        // The first order's payment reminder ({ delayMs }) was handled when due, not before.
        const reminder = result.reminder as { order: number; remindInMs: number; afterMs: number };
        expect(reminder.order).toBe(result.firstOrder);
        expect(reminder.afterMs).toBeGreaterThanOrEqual(reminder.remindInMs);
        // A third order's downstream system was down for every attempt: the policy gave up on it.
        expect(result.deadLettered).toEqual({ order: (result.firstOrder as number) + 2, attempts: 3 });
        if (cell.extraPeers.includes('prom-client')) {
          expect(result.duplicateMetric).toMatch(/outcome="duplicate"\} [1-9]/);
        } else {
          expect(result.duplicateMetric).toBe('unavailable: MissingPeerDependencyError');
        }
        if (withoutKafkajs) {
          // An application on RabbitMQ never needs kafkajs; asking it for Kafka says what to install.
          expect(result.kafkaStartupError).toMatch(
            /^MissingPeerDependencyError: .*Install it: npm i kafkajs@/,
          );
        }
        // The application as `nest new` made it: the template's own main.ts (today's passes @nestjs/observe's
        // instrument, which wraps every provider in a Proxy: a frozen provider crashed the start, issue 37).
        const instrumented = await app.instrumented();
        // (A monorepo's second app comes from the sub-app schematic, whose main.ts passes no instrument.)
        if (
          cell.nest === 12 &&
          !cell.monorepoApp &&
          atLeast(await schematicsVersion(cell.nest), [12, 0, 17])
        ) {
          expect(instrumented).toBe(true);
        }
        const started = await app.startAsGenerated(services.env);
        expect(started.output).not.toMatch(/TypeError/);
        const listed = await app.cli(
          ['dlq', 'list', '--topology', TOPOLOGY_FILE, '--local-plaintext'],
          services.localEnv,
        );
        expect(listed).toContain('orders.billing.dlq');
        const versions = await versionsOf(app, services.brokerVersion);
        rows.push({
          cell: cell.name,
          versions: { ...versions, 'main.ts': instrumented ? 'observe' : 'plain' },
          result,
        });
        if (cell.localRedrive) {
          kept.set(cell.name, {
            app,
            services,
            deadLetteredOrder: (result.deadLettered as { order: number }).order,
            toFirstHandledMs:
              (preparedInMs.get(cell.name) ?? 0) + ((result.firstHandledAt as number) - startedAt),
          });
          keep = true;
        }
      } finally {
        if (services && !keep) releaseLater(services);
        slot();
      }
    },
    20 * 60_000,
  );

  // After every cell's first test (a describe block runs after its parent's tests).
  describe('the local redrive', () => {
    // claim: C-106
    it.concurrent.each(CELLS.filter((cell) => cell.localRedrive).map((cell) => [cell.name, cell] as const))(
      "%s: runs the guide's local redrive as written, plan to execute, and the app bills the order",
      async (name) => {
        const cell = kept.get(name);
        if (!cell) throw new Error(`${name}: the cell's first test did not pass; nothing to redrive`);
        kept.delete(name);
        const slot = await slots.acquire();
        const { app, services, deadLetteredOrder } = cell;
        // Where the DLQ's messages go back to: Kafka's destination topic; RabbitMQ's group queue.
        const target = app.cell.transport === 'kafka' ? 'orders' : 'orders.billing';
        const route = new RegExp(`orders\\.billing\\.dlq -> ${target.replace('.', '\\.')}\\s`);
        const adminDatabase = uniqueName(`compat_admin_${name.replace(/\W/g, '_')}`).toLowerCase();
        const startedAt = Date.now();
        try {
          const output = await runLocalRedrive(app.dir, app.shellEnv(services.localEnv), {
            adminDatabase,
            account: services.cliAccount,
            keySecret: LOCAL_KEY_SECRET,
          });
          expect(output).toMatch(/1 of 1 waiting message\(s\) would be redriven/);
          expect(output).toMatch(/Approved by jane until /);
          expect(output).toMatch(new RegExp(`Redrive \\S+: ${route.source}`));
          expect(output).toContain('1 message(s) redriven; 0 left in orders.billing.dlq.');
          // `dlq history`, the block's last command: the plan, its approval and the redrive, in the audit log.
          const history = output.slice(output.lastIndexOf('0 left in orders.billing.dlq.'));
          expect(history).toMatch(new RegExp(`\\bPLAN\\s+\\S+\\s+${route.source}`));
          expect(history).toMatch(new RegExp(`\\bAPPROVE\\s+jane\\s+${route.source}`));
          expect(history).toMatch(
            new RegExp(`\\bEXECUTE\\s+\\S+\\s+${route.source}\\s*jane\\s+\\S+\\s+1\\s+REDRIVEN`),
          );
          // Back in its source queue or topic, the message is handled once the application runs again.
          const billed = await app.billRedriven(services.env, deadLetteredOrder);
          expect(billed).toMatchObject({ redrivenOrder: deadLetteredOrder, invoices: 1 });
          expect(billed.billedLine).toMatch(new RegExp(`Order ${deadLetteredOrder} billed .*attempt 1\\)`));
          const toRedriveMs = cell.toFirstHandledMs + (Date.now() - startedAt);
          process.stderr.write(
            `${name}: newcomer path: first handled message after ${minutes(cell.toFirstHandledMs)} min ` +
              `(nest new, install, build ${minutes(preparedInMs.get(name) ?? 0)} min); the local redrive ` +
              `handled after ${minutes(toRedriveMs)} min\n${output}\n`,
          );
        } finally {
          slot();
          await services.release();
          await dropDb(adminDatabase);
        }
      },
      10 * 60_000,
    );
  });
});

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

function minutes(ms: number): string {
  return (ms / 60_000).toFixed(1);
}

interface CellServices {
  readonly env: Record<string, string>;
  /**
   * What a developer's shell has for the README's local admin commands: the broker the application uses (on
   * RabbitMQ, the vhost's admin: locally the developer's user may configure; the cell's service user may not).
   */
  readonly localEnv: Record<string, string>;
  readonly brokerVersion: string;
  /** The account the admin CLI acts as with `localEnv` and `--local-plaintext` (the keyring's "me"). */
  readonly cliAccount: string;
  release(): Promise<void>;
}

/** A database of the cell's own, and a private Kafka broker or a RabbitMQ vhost of its own. */
async function servicesFor(cell: CompatCell): Promise<CellServices> {
  const database = uniqueName(`compat_${cell.name.replace(/\W/g, '_')}`).toLowerCase();
  await ensureDatabase(infraEnv().databaseUrl, database);
  const dropDatabase = () => dropDb(database);
  const env = {
    DATABASE_URL: databaseUrl(infraEnv().databaseUrl, database),
    MESSAGING_KEY_SECRET: LOCAL_KEY_SECRET,
  };
  if (cell.transport === 'kafka') {
    const broker: KafkaBroker = await startPrivateBroker();
    const brokers = broker.brokers.join(',');
    return {
      env: { ...env, KAFKA_BROKERS: brokers },
      localEnv: { KAFKA_BROKERS: brokers },
      brokerVersion: `Kafka ${await pinnedKafkaVersion()}`,
      cliAccount: os.userInfo().username, // Kafka without SASL: the operating-system user
      release: async () => {
        await broker.destroy();
        await dropDatabase();
      },
    };
  }
  const vhost = await RabbitVhost.create('compat');
  return {
    env: { ...env, AMQP_URL: vhost.urlAs(vhost.service) },
    localEnv: { AMQP_URL: vhost.urlAs(vhost.admin) },
    brokerVersion: `RabbitMQ ${await rabbitVersion()}`,
    cliAccount: decodeURIComponent(new URL(vhost.urlAs(vhost.admin)).username),
    release: async () => {
      await vhost.delete();
      await dropDatabase();
    },
  };
}

async function versionsOf(app: ConsumerApp, broker: string): Promise<Record<string, string>> {
  const client = app.cell.transport === 'kafka' ? 'kafkajs' : 'amqplib';
  return {
    node: await app.nodeVersion(),
    module: await app.moduleSystem(),
    '@nestjs/core': await app.versionOf('@nestjs/core'),
    '@nestjs/typeorm': await app.versionOf('@nestjs/typeorm'),
    typeorm: await app.versionOf('typeorm'),
    typescript: await app.versionOf('typescript'),
    client: `${client} ${await app.versionOf(client)}`,
    broker,
    postgres: await postgresVersion(),
  };
}

function matrixTable(done: readonly Row[]): string {
  const header = [
    'cell',
    'node',
    'module',
    '@nestjs/core',
    '@nestjs/typeorm',
    'typeorm',
    'typescript',
    'client',
    'broker',
    'postgres',
    'main.ts',
  ];
  const order = (row: Row) => CELLS.findIndex((cell) => cell.name === row.cell);
  const lines = [...done]
    .sort((a, b) => order(a) - order(b))
    .map((row) => [row.cell, ...header.slice(1).map((key) => row.versions[key] ?? '')]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [
    `Compatibility matrix: ${done.length} of ${CELLS.length} cells passed`,
    format(header),
    format(widths.map((w) => '-'.repeat(w))),
    ...lines.map(format),
  ].join('\n');
}

async function dropDb(database: string): Promise<void> {
  const client = new Client({ connectionString: infraEnv().databaseUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists "${database}" with (force)`);
  } finally {
    await client.end();
  }
}

async function postgresVersion(): Promise<string> {
  const client = new Client({ connectionString: infraEnv().databaseUrl });
  await client.connect();
  try {
    const {
      rows: [row],
    } = await client.query<{ server_version: string }>('show server_version');
    return row.server_version.split(' ')[0];
  } finally {
    await client.end();
  }
}

async function rabbitVersion(): Promise<string> {
  const { stdout } = await run('rabbitmqctl', ['version'], { timeout: 30_000 });
  return stdout.trim();
}

/** The version of `@nestjs/schematics` the cached Nest CLI of `major` generates apps with, as numbers. */
async function schematicsVersion(major: number): Promise<number[]> {
  const cliDir = path.dirname(path.dirname(await nestCli(major))); // node_modules/@nestjs/cli
  for (const candidate of [
    path.join(cliDir, 'node_modules', '@nestjs', 'schematics', 'package.json'),
    path.join(cliDir, '..', 'schematics', 'package.json'),
  ]) {
    const text = await fs.readFile(candidate, 'utf8').catch(() => undefined);
    if (text) return (JSON.parse(text) as { version: string }).version.split('.').map(Number);
  }
  throw new Error(`No @nestjs/schematics beside the Nest CLI in ${cliDir}`);
}

function atLeast(version: readonly number[], floor: readonly number[]): boolean {
  for (let i = 0; i < floor.length; i++) {
    if ((version[i] ?? 0) !== floor[i]) return (version[i] ?? 0) > floor[i];
  }
  return true;
}
