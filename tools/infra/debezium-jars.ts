import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { lockFolder } from './file-stamps';
import { cacheRoot, ensureMavenDependencies, explainToolFailure } from './kafka-jars';

const run = promisify(execFile);

const DEBEZIUM_DIR = path.resolve(__dirname, 'debezium');
/** The pom that names Debezium's PostgreSQL connector (the single source of its version). */
export const DEBEZIUM_POM = path.join(DEBEZIUM_DIR, 'pom.xml');
const CONNECT_POM = path.join(DEBEZIUM_DIR, 'connect-pom.xml');
/** The source of the `OutboxHeaders` transformation (its class and its ServiceLoader manifest). */
const OUTBOX_HEADERS_SOURCE = path.resolve(__dirname, '..', '..', 'examples', 'debezium', 'outbox-headers');
const OUTBOX_HEADERS_CLASS = path.join('nestreliablemessaging', 'debezium', 'OutboxHeaders.java');

/** What a Kafka Connect worker running Debezium is started from. */
export interface DebeziumInstallation {
  /** The worker's class path: the Connect runtime Debezium is built against (`<folder>/*`). */
  readonly classpath: string;
  /** `plugin.path`: Debezium's PostgreSQL connector and the library's `OutboxHeaders` transformation, each isolated. */
  readonly pluginPath: readonly string[];
  readonly connectVersion: string;
  readonly debeziumVersion: string;
}

/** The Debezium version pinned in its pom. */
export function pinnedDebeziumVersion(): Promise<string> {
  return pomProperty(DEBEZIUM_POM, 'debezium.version');
}

/** The Kafka Connect version that runs it (see connect-pom.xml for why it is not the broker's). */
export function pinnedConnectVersion(): Promise<string> {
  return pomProperty(CONNECT_POM, 'connect.version');
}

async function pomProperty(pom: string, name: string): Promise<string> {
  const text = await fs.readFile(pom, 'utf8');
  const match = new RegExp(`<${name.replace('.', '\\.')}>([^<]+)</${name.replace('.', '\\.')}>`).exec(text);
  if (!match) throw new Error(`No <${name}> property in ${pom}`);
  return match[1].trim();
}

/**
 * Fetches, once, the Kafka Connect runtime and Debezium's PostgreSQL connector (Maven Central, into the cache
 * beside the Kafka broker's jars), and compiles the `OutboxHeaders` transformation (`javac`, keyed by its
 * source's hash).
 */
export async function ensureDebeziumJars(
  log: (line: string) => void = () => undefined,
): Promise<DebeziumInstallation> {
  const connectVersion = await pinnedConnectVersion();
  const debeziumVersion = await pinnedDebeziumVersion();
  const connect = await ensureMavenDependencies({
    pom: CONNECT_POM,
    home: path.join(cacheRoot(), `kafka-connect-${connectVersion}`),
    label: `Kafka Connect ${connectVersion}`,
    log,
  });
  // A plugin folder: the Connect runtime provides Kafka's own classes (and loads them before a plugin's).
  const debeziumHome = path.join(cacheRoot(), `debezium-${debeziumVersion}`);
  await ensureMavenDependencies({
    pom: DEBEZIUM_POM,
    home: debeziumHome,
    label: `Debezium ${debeziumVersion} (PostgreSQL connector)`,
    mavenArgs: ['-DexcludeGroupIds=org.apache.kafka'],
    log,
  });
  const transform = await ensureOutboxHeaders(connect);
  return {
    classpath: path.join(connect, '*'),
    pluginPath: [debeziumHome, transform],
    connectVersion,
    debeziumVersion,
  };
}

/**
 * Compiles `OutboxHeaders` against the Connect runtime into `<cache>/outbox-headers-<hash>/plugin/` (classes
 * and the ServiceLoader manifest: a plugin folder for `plugin.path`) and returns the folder above it.
 */
async function ensureOutboxHeaders(connectLibs: string): Promise<string> {
  const source = path.join(OUTBOX_HEADERS_SOURCE, OUTBOX_HEADERS_CLASS);
  const manifest = path.join('META-INF', 'services', 'org.apache.kafka.connect.transforms.Transformation');
  const hash = createHash('sha256')
    .update(await fs.readFile(source))
    .update(await fs.readFile(path.join(OUTBOX_HEADERS_SOURCE, manifest)))
    .digest('hex')
    .slice(0, 12);
  const home = path.join(cacheRoot(), `outbox-headers-${hash}`);
  const done = path.join(home, '.complete');
  if (existsSync(done)) return home;
  await fs.mkdir(home, { recursive: true });
  const release = await lockFolder(path.join(home, '.lock'));
  try {
    if (existsSync(done)) return home;
    const classes = path.join(home, 'plugin');
    await fs.rm(classes, { recursive: true, force: true });
    try {
      await run('javac', ['-d', classes, '-cp', path.join(connectLibs, '*'), source]);
    } catch (error) {
      throw explainToolFailure(
        'javac',
        error,
        'The JDK (javac, Java 17+) compiles the OutboxHeaders transformation',
      );
    }
    await fs.mkdir(path.join(classes, 'META-INF', 'services'), { recursive: true });
    await fs.copyFile(path.join(OUTBOX_HEADERS_SOURCE, manifest), path.join(classes, manifest));
    await fs.writeFile(done, `${hash}\n`);
    return home;
  } finally {
    await release();
  }
}
