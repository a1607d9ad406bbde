import { BenchDatabases } from './databases';
import { BrokerFixtures } from './brokers';
import { BenchPlan, ScenarioName } from './plan';
import { ProbeStarter } from './probe-process';
import { Progress } from './progress';
import { BenchResults } from './results';

/** What every scenario gets: the plan, the shared database and brokers, where to put its figures. */
export interface ScenarioContext {
  readonly plan: BenchPlan;
  readonly progress: Progress;
  readonly databases: BenchDatabases;
  readonly brokers: BrokerFixtures;
  /** Processes for consumers, raw readers and relays of their own (`startConsumerProcess` ...). */
  readonly probes: ProbeStarter;
  /** A database of the run's own; scenarios work in schemas of their own inside it. */
  readonly benchDbUrl: string;
  readonly results: BenchResults;
}

/** One numbered figure of issue 7. */
export interface Scenario {
  readonly name: ScenarioName;
  /** Progress steps this scenario takes with `plan`. */
  steps(plan: BenchPlan): number;
  run(context: ScenarioContext): Promise<void>;
}
