import { MachineInfo, MachineLoad } from './machine';

export type { MachineInfo } from './machine';
import { Summary } from './stats';

/** One line of the results table: our figure beside its baseline, measured in the same run. */
export interface Figure {
  /** '1. Relay throughput', ... */
  readonly scenario: string;
  readonly name: string;
  readonly unit: string;
  readonly ours: Summary;
  readonly baseline?: { readonly name: string; readonly value: Summary };
  /** ours.median / baseline.median. */
  readonly ratio?: number;
  readonly target?: { readonly text: string; readonly met: boolean };
}

/** One point of the latency matrix: commit → handler start at one offered rate, one relay configuration. */
export interface LatencyPoint {
  readonly transport: string;
  readonly config: string;
  readonly label: string;
  /** Messages per second offered (scheduled) and committed (achieved), medians over the runs. */
  readonly offeredRate: number;
  readonly achievedRate: number;
  readonly p50: Summary;
  readonly p95: Summary;
  readonly p99: Summary;
  readonly max: Summary;
  /** Commit → arrival at a raw reader beside the consumer: the relay's and the broker's share. */
  readonly toBrokerP50?: Summary;
  readonly toBrokerP99?: Summary;
  readonly samplesPerRun: number;
  /** How busy the machine was while the point's runs ran. */
  readonly machine?: MachineLoad;
  /**
   * CPU time per delivered message (µs, user + system from /proc) over the point's runs, per process group:
   * `bench` (the writer and the relay, or the raw producer), `consumer` (its process), `postgres` (the
   * backends connected to the bench database), `broker` (the Kafka JVM or RabbitMQ's beam.smp, shared with
   * whatever else uses it). Absent off Linux and in results written before 2026-12-06.
   */
  readonly cpuUsPerMessage?: Readonly<Record<string, number>>;
}

export interface BenchResults {
  readonly startedAt: string;
  finishedAt?: string;
  durationS?: number;
  readonly mode: 'full' | 'smoke';
  /** Every scenario on both brokers with the full plan: the run whose table is in bench/README.md. */
  readonly complete: boolean;
  readonly machine: MachineInfo;
  readonly plan: unknown;
  readonly figures: Figure[];
  readonly latency: LatencyPoint[];
  /** Facts worth keeping beside the figures (peers that could not run, how a figure was measured...). */
  readonly notes: string[];
  /** Scenarios that failed, with the error: the others still ran. */
  readonly failures: string[];
  /** Wall-clock seconds of each scenario, setup included (absent in results written before 2026-12-03). */
  readonly scenarioSeconds?: Record<string, number>;
}
