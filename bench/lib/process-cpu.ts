import { readdirSync, readFileSync } from 'node:fs';
import { CLOCK_TICKS_PER_S } from './machine';

/** What the bench reads of `/proc/<pid>/stat`. */
export interface ProcStat {
  readonly pid: number;
  /** The command name (in parentheses in the file; it may hold spaces and parentheses itself). */
  readonly comm: string;
  readonly ppid: number;
  /** CPU time in user and in kernel mode, clock ticks (`CLOCK_TICKS_PER_S`). */
  readonly utimeTicks: number;
  readonly stimeTicks: number;
}

/**
 * Parses one `/proc/<pid>/stat` line (proc(5)): `pid (comm) state ppid … utime stime …`, utime and stime
 * being fields 14 and 15. The command name ends at the last `)`: it may hold spaces and parentheses.
 */
export function parseProcStat(line: string): ProcStat {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`Not a /proc/<pid>/stat line: ${line.slice(0, 80)}`);
  // Field 3 (state) onwards; index 0 is field 3.
  const rest = line
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const field = (n: number) => Number(rest[n - 3]);
  const stat = {
    pid: Number(line.slice(0, open).trim()),
    comm: line.slice(open + 1, close),
    ppid: field(4),
    utimeTicks: field(14),
    stimeTicks: field(15),
  };
  if (![stat.pid, stat.ppid, stat.utimeTicks, stat.stimeTicks].every(Number.isFinite))
    throw new Error(`Not a /proc/<pid>/stat line: ${line.slice(0, 80)}`);
  return stat;
}

/** `/proc/<pid>/stat`, or undefined once the process exited (or off Linux). */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Every live process's pid and command line (`\0` between the arguments); empty off Linux. */
export function listProcesses(): Array<{ pid: number; cmdline: string; comm: string }> {
  let names: string[];
  try {
    names = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    try {
      const pid = Number(name);
      const stat = readProcStat(pid);
      if (!stat) return [];
      return [{ pid, cmdline: readFileSync(`/proc/${name}/cmdline`, 'utf8'), comm: stat.comm }];
    } catch {
      return [];
    }
  });
}

/** A group of processes whose CPU time is measured together (their pids are asked at the start and the end). */
export interface CpuGroup {
  readonly name: string;
  readonly pids: () => Promise<readonly number[]> | readonly number[];
}

/** CPU time per group (ms) between `start` and `stop`. */
export type CpuUse = Record<string, number>;

/**
 * CPU time (user + system) each group of processes used while something ran: per pid, the ticks at the
 * end minus those at the start; a pid that appeared meanwhile counts whole, one that exited meanwhile is
 * lost (its time cannot be read any more). Resolution: one tick (10 ms) per process.
 */
export class ProcessCpuMeter {
  private constructor(
    private readonly groups: readonly CpuGroup[],
    private readonly before: Map<string, Map<number, number>>,
  ) {}

  static async start(groups: readonly CpuGroup[]): Promise<ProcessCpuMeter> {
    const before = new Map<string, Map<number, number>>();
    for (const group of groups) before.set(group.name, ticksOf(await group.pids()));
    return new ProcessCpuMeter(groups, before);
  }

  async stop(): Promise<CpuUse> {
    const use: CpuUse = {};
    for (const group of this.groups) {
      const start = this.before.get(group.name) ?? new Map<number, number>();
      const pids = new Set([...start.keys(), ...(await group.pids())]);
      const end = ticksOf([...pids]);
      let ticks = 0;
      for (const [pid, now] of end) ticks += now - (start.get(pid) ?? 0);
      use[group.name] = (ticks * 1000) / CLOCK_TICKS_PER_S;
    }
    return use;
  }
}

function ticksOf(pids: readonly number[]): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const pid of pids) {
    const stat = readProcStat(pid);
    if (stat) ticks.set(pid, stat.utimeTicks + stat.stimeTicks);
  }
  return ticks;
}

/** The broker's server process on this machine: the Kafka JVM (`kafka.Kafka`) or RabbitMQ's `beam.smp`. */
export function brokerPids(kind: 'kafka' | 'rabbitmq'): number[] {
  return listProcesses()
    .filter((p) =>
      kind === 'kafka'
        ? p.cmdline.split('\0').includes('kafka.Kafka')
        : p.comm === 'beam.smp' && p.cmdline.includes('rabbit'),
    )
    .map((p) => p.pid);
}
