import 'reflect-metadata';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as prettier from 'prettier';
import { parseArgs } from 'node:util';
import { infraEnv } from '../tools/infra/env';
import { ensureInfrastructure } from '../tools/infra/services';
import { BenchDialect } from './lib/bench-outbox';
import { BrokerFixtures } from './lib/brokers';
import { benchName, BenchDatabases } from './lib/databases';
import { machineInfo, whileMeasuring } from './lib/machine';
import { LATENCY_CONFIGS } from './lib/latency-configs';
import {
  buildPlan,
  LatencyConfigId,
  OPTIONAL_SCENARIOS,
  SCENARIOS,
  ScenarioName,
  TransportKind,
} from './lib/plan';
import { createProgress } from './lib/progress';
import { ProbeProcesses } from './lib/probe-processes';
import { renderResults, replaceResults } from './lib/report';
import { BenchResults } from './lib/results';
import { Scenario, ScenarioContext } from './lib/scenario';
import { consumerThroughput } from './scenarios/consumer-throughput';
import { debezium } from './scenarios/debezium';
import { growth } from './scenarios/growth';
import { idleCost } from './scenarios/idle-cost';
import { kafkaClient } from './scenarios/kafka-client';
import { latency } from './scenarios/latency';
import { logical } from './scenarios/logical';
import { memory } from './scenarios/memory';
import { peers } from './scenarios/peers';
import { relayThroughput } from './scenarios/relay-throughput';
import { scaling } from './scenarios/scaling';

const ALL: readonly Scenario[] = [
  relayThroughput,
  latency,
  idleCost,
  growth,
  consumerThroughput,
  peers,
  scaling,
  kafkaClient,
  logical,
  debezium,
  memory,
];
const BENCH_DIR = __dirname;

const USAGE = `npm run bench -- [options]

  --smoke              every scenario with tiny sizes, one run each, no warm-up windows (CI)
  --only a,b           scenarios: ${SCENARIOS.join(', ')}
                       and, only when named: ${OPTIONAL_SCENARIOS.join(', ')}
  --transport kind     kafka or rabbitmq (default both)
  --database kind      postgres or mariadb: where relay throughput and growth run (default both)
  --runs N             runs per figure (default 5 for throughput, 3 elsewhere; 1 with --smoke)
  --rows N             outbox rows of the relay throughput runs (default 20000)
  --sent a,b           sent rows beside the growth claims (default 0,100000,1000000)
  --configs a,b        latency configurations: ${Object.keys(LATENCY_CONFIGS).join(', ')}
  --rates a,b          offered rates of the latency runs, messages/s (default 50,200,1000)
  --messages N         messages through the demo services in the memory scenario (default 1000000)
  --help

A full run of everything writes bench/results/<date>.json and the table in bench/README.md; any other
run writes bench/results/tmp/<date>-<mode>.json only. Targets missed are reported, never an error.`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      only: { type: 'string' },
      transport: { type: 'string' },
      database: { type: 'string' },
      runs: { type: 'string' },
      rows: { type: 'string' },
      sent: { type: 'string' },
      configs: { type: 'string' },
      rates: { type: 'string' },
      messages: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const only = values.only?.split(',').map((s) => s.trim()) as ScenarioName[] | undefined;
  const unknown = only?.filter((s) => !SCENARIOS.includes(s) && !OPTIONAL_SCENARIOS.includes(s));
  if (unknown?.length) throw new Error(`Unknown scenario(s): ${unknown.join(', ')}\n\n${USAGE}`);
  const transports = values.transport?.split(',').map((s) => s.trim()) as TransportKind[] | undefined;
  const dialects = values.database?.split(',').map((s) => s.trim()) as BenchDialect[] | undefined;
  const unknownDatabases = dialects?.filter((d) => d !== 'postgres' && d !== 'mariadb');
  if (unknownDatabases?.length)
    throw new Error(`Unknown database(s): ${unknownDatabases.join(', ')}\n\n${USAGE}`);
  const plan = buildPlan({
    smoke: values.smoke,
    only,
    transports,
    databases: dialects,
    runs: values.runs ? Number(values.runs) : undefined,
    rows: values.rows ? Number(values.rows) : undefined,
    sent: values.sent?.split(',').map(Number),
    configs: values.configs?.split(',').map((s) => s.trim()) as LatencyConfigId[] | undefined,
    rates: values.rates?.split(',').map(Number),
    messages: values.messages ? Number(values.messages) : undefined,
  });
  const complete =
    plan.mode === 'full' &&
    !only &&
    !transports &&
    !dialects &&
    !values.runs &&
    !values.rows &&
    !values.sent &&
    !values.configs &&
    !values.rates &&
    !values.messages;

  const env = infraEnv();
  await ensureInfrastructure(env, (line) => process.stderr.write(`[infra] ${line}\n`));
  const scenarioSeconds: Record<string, number> = {};
  const results: BenchResults = {
    startedAt: new Date().toISOString(),
    mode: plan.mode,
    complete,
    machine: await machineInfo(),
    plan,
    figures: [],
    latency: [],
    notes: [],
    failures: [],
    scenarioSeconds,
  };
  const scenarios = ALL.filter((s) => plan.scenarios.includes(s.name));
  const progress = createProgress(scenarios.reduce((sum, s) => sum + s.steps(plan), 0));
  const databases = new BenchDatabases(env.databaseUrl);
  const brokers = new BrokerFixtures();
  // The smoke run keeps its processes for the next role and forks the latency runs' two ahead.
  const probes = new ProbeProcesses(plan.mode === 'smoke');
  if (plan.mode === 'smoke' && plan.scenarios.includes('latency')) probes.prefork(2);
  const cleanup = async () => {
    progress.done();
    await probes.close().catch((e: Error) => console.error(`Process cleanup failed: ${e.message}`));
    await brokers.cleanup().catch((e: Error) => console.error(`Broker cleanup failed: ${e.message}`));
    await databases.dropAll().catch((e: Error) => console.error(`Database cleanup failed: ${e.message}`));
  };
  process.once('SIGINT', () => {
    process.stderr.write('\nInterrupted: cleaning up…\n');
    results.failures.push('interrupted (SIGINT): the figures so far only');
    void cleanup()
      .then(() => write({ ...results, complete: false }))
      .finally(() => process.exit(130));
  });

  const started = Date.now();
  try {
    const context: ScenarioContext = {
      plan,
      progress,
      databases,
      brokers,
      probes,
      benchDbUrl: await databases.create(benchName('bench')),
      results,
    };
    for (const scenario of scenarios) {
      const began = Date.now();
      try {
        const { summary } = await whileMeasuring(() => scenario.run(context));
        if (summary) results.notes.push(`Machine during ${scenario.name}: ${summary}.`);
      } catch (error) {
        const message = `${scenario.name}: ${(error as Error).stack ?? String(error)}`;
        results.failures.push(message.split('\n').slice(0, 3).join(' '));
        progress.log(`Scenario ${message}`);
      } finally {
        const seconds = Math.round((Date.now() - began) / 100) / 10;
        scenarioSeconds[scenario.name] = seconds;
        progress.log(`${scenario.name}: ${seconds} s`);
      }
    }
  } finally {
    await cleanup();
  }
  results.finishedAt = new Date().toISOString();
  results.durationS = Math.round((Date.now() - started) / 1000);
  await write(results);
  return results.failures.length > 0 ? 1 : 0;
}

async function write(results: BenchResults): Promise<void> {
  const date = results.startedAt.slice(0, 10);
  const file = results.complete
    ? path.join(BENCH_DIR, 'results', `${date}.json`)
    : path.join(
        BENCH_DIR,
        'results',
        'tmp',
        `${results.startedAt.replace(/[:.]/g, '-')}-${results.mode}.json`,
      );
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  const relative = path.relative(path.dirname(BENCH_DIR), file);
  const block = renderResults(results, relative);
  if (results.complete) {
    const readme = path.join(BENCH_DIR, 'README.md');
    // Formatted as `npm run lint` checks it, so that a committed full run passes lint as written.
    const text = replaceResults(readFileSync(readme, 'utf8'), block);
    const options = (await prettier.resolveConfig(readme)) ?? {};
    writeFileSync(readme, await prettier.format(text, { ...options, filepath: readme }));
  }
  console.log(`\n${block}\n\nResults: ${relative}${results.complete ? ' (and bench/README.md)' : ''}`);
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  },
);
