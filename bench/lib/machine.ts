import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as amqp from 'amqplib';
import { infraEnv } from '../../tools/infra/env';
import { pinnedKafkaVersion } from '../../tools/infra/kafka-jars';
import { withClient } from './databases';

/** The machine and the versions of everything the figures depend on. */
export interface MachineInfo {
  readonly cores: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly loadAverageAtStart: readonly number[];
  readonly node: string;
  readonly postgres: string;
  readonly kafka: string;
  readonly rabbitmq: string;
  readonly kafkajs: string;
  readonly amqplib: string;
}

export async function machineInfo(): Promise<MachineInfo> {
  const env = infraEnv();
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
    node: process.version,
    postgres: await withClient(env.databaseUrl, async (c) => {
      const { rows } = await c.query<{ v: string }>("select current_setting('server_version') as v");
      return rows[0].v;
    }),
    kafka: env.localKafka ? `${await pinnedKafkaVersion()} (local broker)` : 'unknown (KAFKA_BROKERS)',
    rabbitmq: await rabbitVersion(env.amqpUrl),
    kafkajs: packageVersion('kafkajs'),
    amqplib: packageVersion('amqplib'),
  };
}

async function rabbitVersion(url: string): Promise<string> {
  const model = await amqp.connect(url);
  try {
    const props = (model.connection as unknown as { serverProperties?: { version?: string } })
      .serverProperties;
    return props?.version ?? 'unknown';
  } finally {
    await model.close();
  }
}

/** The installed version of package `name` ("unknown" when it cannot be found). */
export function packageVersion(name: string): string {
  try {
    // Some packages do not export their package.json: walk up from the entry point instead.
    let dir = path.dirname(require.resolve(name));
    while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
    return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** The machine's CPU time so far (Linux `/proc/stat`, all cores): busy, stolen by the hypervisor, total. */
interface CpuTimes {
  readonly busy: number;
  readonly steal: number;
  readonly total: number;
}

function cpuTimes(): CpuTimes | undefined {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number);
    const busy = user + nice + system + irq + softirq;
    return { busy, steal, total: busy + idle + iowait + steal };
  } catch {
    return undefined; // not Linux
  }
}

/** USER_HZ: the clock ticks per second /proc counts in (100 on Linux). */
export const CLOCK_TICKS_PER_S = 100;

/**
 * The fields of `/proc/<pid>/stat` after the command name (so that field 3 of the line, the state, is
 * index 0; utime and stime are 11 and 12, the start time 19), or undefined off Linux or once it exited.
 */
export function processStatFields(pid: number | string): string[] | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return line.slice(line.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU time (ms, user and system) used so far by the live processes whose command line `matches` (Linux
 * /proc; 0 elsewhere). A process that exits in between takes its time with it.
 */
export function processesCpuMs(matches: (cmdline: string) => boolean): number {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  let ticks = 0;
  for (const pid of pids) {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!matches(cmdline)) continue;
    const fields = processStatFields(pid);
    if (fields) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_S;
}

/** How busy the machine was while something ran. */
export interface MachineLoad {
  /** Share of all cores' time spent busy (every process, not only the bench's), %. */
  readonly busyPct: number;
  /** Share of CPU time the hypervisor gave to other machines, %. */
  readonly stealPct: number;
  /** The 1-minute load average at the end. */
  readonly load: number;
}

/** `cores 99% busy, 0% stolen, load 7.0`. */
export function describeLoad(load: MachineLoad): string {
  return `cores ${load.busyPct}% busy, ${load.stealPct}% stolen by the hypervisor, load average ${load.load.toFixed(1)} at the end`;
}

/** Runs `work` and says how busy the machine was meanwhile (undefined off Linux). */
export async function measureMachine<T>(work: () => Promise<T>): Promise<{ result: T; load?: MachineLoad }> {
  const before = cpuTimes();
  const result = await work();
  const after = cpuTimes();
  if (!before || !after || after.total <= before.total) return { result };
  const share = (value: number) => Math.round((100 * value) / (after.total - before.total));
  return {
    result,
    load: {
      busyPct: share(after.busy - before.busy),
      stealPct: share(after.steal - before.steal),
      load: Math.round(os.loadavg()[0] * 10) / 10,
    },
  };
}

/**
 * Measures what the machine did while `work` ran: how busy its cores were (every process, not only the
 * bench's) and how much CPU time the hypervisor gave to other machines (steal). A scenario that ran slow
 * on a busy or stolen machine shows it in the notes, beside its figures.
 */
export async function whileMeasuring<T>(work: () => Promise<T>): Promise<{ result: T; summary?: string }> {
  const { result, load } = await measureMachine(work);
  return { result, summary: load ? describeLoad(load) : undefined };
}

/**
 * The speed of one core right now: SHA-256 over 1 MiB buffers for `ms`, in MiB/s. Absolute figures are read
 * beside it (and beside the floor and the raw producer measured in the same run): a machine half as fast, or
 * half taken by others, shows here as well as in the figures.
 */
export function coreSpeedMiBps(ms = 500): number {
  const buffer = Buffer.alloc(1 << 20, 7);
  const started = performance.now();
  let rounds = 0;
  while (performance.now() - started < ms) {
    createHash('sha256').update(buffer).digest();
    rounds++;
  }
  return Math.round((rounds * 1000) / (performance.now() - started));
}
