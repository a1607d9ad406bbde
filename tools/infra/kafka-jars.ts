import { execFile } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The pom that names the pinned Kafka broker and its logging binding. */
export const KAFKA_POM = path.resolve(__dirname, 'kafka', 'pom.xml');

/** Where downloaded jars and local broker state live: outside git, shared by every clone on the machine. */
export function cacheRoot(): string {
  if (process.env.MESSAGING_CACHE_DIR) return process.env.MESSAGING_CACHE_DIR;
  const base = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  return path.join(base, 'nest-reliable-messaging');
}

/** The Kafka version pinned in the pom (the pom is the single source of truth). */
export async function pinnedKafkaVersion(): Promise<string> {
  const pom = await fs.readFile(KAFKA_POM, 'utf8');
  const match = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(pom);
  if (!match) throw new Error(`No <kafka.version> property in ${KAFKA_POM}`);
  return match[1].trim();
}

/**
 * Downloads the Kafka broker jars with Maven once and returns the folder that holds them.
 * Several processes may ask at once (jest workers, the demo): a lock folder lets one download.
 */
export async function ensureKafkaJars(log: (line: string) => void = () => undefined): Promise<string> {
  const version = await pinnedKafkaVersion();
  return ensureMavenDependencies({
    pom: KAFKA_POM,
    home: path.join(cacheRoot(), `kafka-${version}`),
    label: `Apache Kafka ${version}`,
    log,
  });
}

/** What `ensureMavenDependencies` fetches, and where to. */
export interface MavenDependencies {
  /** The pom whose dependencies (and theirs) are copied. */
  readonly pom: string;
  /** The cache folder: the jars go to `<home>/libs`, once (`<home>/.complete` marks it done). */
  readonly home: string;
  /** For progress lines and errors, e.g. `Apache Kafka 4.4.0`. */
  readonly label: string;
  /** More arguments for Maven, e.g. `-Dkafka.version=4.4.0` or `-DexcludeGroupIds=…`. */
  readonly mavenArgs?: readonly string[];
  readonly log?: (line: string) => void;
}

/**
 * Copies the dependencies a pom names from Maven Central into `<home>/libs` once (`mvn
 * dependency:copy-dependencies`) and returns that folder. Several processes may ask at once: a lock folder
 * lets one download, the others wait for its marker.
 */
export async function ensureMavenDependencies(fetch: MavenDependencies): Promise<string> {
  const { home, label } = fetch;
  const log = fetch.log ?? (() => undefined);
  const libs = path.join(home, 'libs');
  const marker = path.join(home, '.complete');
  if (existsSync(marker)) return libs;

  await fs.mkdir(home, { recursive: true });
  const lock = path.join(home, '.lock');
  await acquireLock(lock, marker);
  try {
    if (existsSync(marker)) return libs;
    log(`Fetching ${label} from Maven Central (once; cached in ${home})...`);
    const staging = path.join(home, `libs.${process.pid}.tmp`);
    await fs.rm(staging, { recursive: true, force: true });
    try {
      await run(
        'mvn',
        [
          '-q',
          '-B',
          '-f',
          fetch.pom,
          'dependency:copy-dependencies',
          `-DoutputDirectory=${staging}`,
          ...(fetch.mavenArgs ?? []),
        ],
        { maxBuffer: 16 * 1024 * 1024 },
      );
    } catch (error) {
      throw explainToolFailure('mvn', error, `Maven fetches ${label} from Maven Central`);
    }
    await fs.rm(libs, { recursive: true, force: true });
    await fs.rename(staging, libs);
    await fs.writeFile(marker, `${label}\n`);
    log(`${label} jars are in ${libs}`);
    return libs;
  } finally {
    await fs.rm(lock, { recursive: true, force: true });
  }
}

async function acquireLock(lock: string, marker: string): Promise<void> {
  const staleAfterMs = 10 * 60_000;
  for (;;) {
    try {
      await fs.mkdir(lock);
      return;
    } catch {
      if (existsSync(marker)) return;
      const stat = await fs.stat(lock).catch(() => undefined);
      if (stat && Date.now() - stat.mtimeMs > staleAfterMs) {
        await fs.rm(lock, { recursive: true, force: true });
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Turns a failed child process into an error that says which tool is missing or what it printed. */
export function explainToolFailure(tool: string, error: unknown, purpose: string): Error {
  const failure = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
  if (failure.code === 'ENOENT') {
    return new Error(
      `'${tool}' is not on PATH. ${purpose}; install it (Debian: apt-get install maven openjdk-17-jre-headless).`,
    );
  }
  const output = `${failure.stdout ?? ''}${failure.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
  return new Error(`'${tool}' failed (${failure.message.split('\n')[0]}).\n${output}`);
}
