import { Figure, LatencyPoint, BenchResults } from './results';
import { Summary } from './stats';

export const RESULTS_START = '<!-- bench:results:start -->';
export const RESULTS_END = '<!-- bench:results:end -->';

/** The markdown block bench/README.md shows between its result markers. */
export function renderResults(results: BenchResults, jsonPath: string): string {
  const m = results.machine;
  const lines = [
    `Run of ${results.startedAt.slice(0, 16).replace('T', ' ')} UTC (${results.mode} run, ${results.durationS ?? '?'} s), ` +
      `raw figures in [\`${jsonPath}\`](${jsonPath.replace(/^bench\//, '')}).`,
    '',
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, load average at start ${m.loadAverageAtStart.join(' / ')} ` +
      `(each scenario's notes say how busy the cores were). Node ${m.node}, PostgreSQL ${m.postgres}, Kafka ${m.kafka}, RabbitMQ ${m.rabbitmq}, ` +
      `kafkajs ${m.kafkajs}, amqplib ${m.amqplib}.`,
    '',
    ...scenarioTimes(results),
    'Each cell: median of the runs (min–max, number of runs). Ratio: ours ÷ baseline, medians.',
    '',
    '| Figure | Ours | Baseline | Baseline figure | Ratio | Target | Met |',
    '| --- | --: | --- | --: | --: | --- | :-: |',
    ...results.figures.map(figureRow),
  ];
  if (results.latency.length > 0) {
    lines.push(
      '',
      'Latency, commit of the business transaction → start of the handler (ms). p-values per run over every ' +
        'message of the window; the cell is the median of the runs (min–max). The last column is the share ' +
        'before the consumer: commit → arrival at a raw reader of the topic or exchange (no inbox, no handler).',
      '',
      '| Broker | Relay woken by | Offered → committed msg/s | p50 | p95 | p99 | max | p99 ÷ blog 1 s poll | Commit → on the broker p50 / p99 | CPU µs/msg: bench / consumer / PostgreSQL / broker | Cores busy / stolen, load |',
      '| --- | --- | --: | --: | --: | --: | --: | --: | --: | --: | --- |',
      ...latencyRows(results.latency),
    );
  }
  if (results.notes.length > 0) lines.push('', ...results.notes.map((n) => `- ${n}`));
  if (results.failures.length > 0) lines.push('', 'Failed:', ...results.failures.map((f) => `- ${f}`));
  return lines.join('\n');
}

/** `Time per scenario (setup included): throughput 12.3 s, ...` and a blank line, when the run recorded them. */
function scenarioTimes(results: BenchResults): string[] {
  const times = Object.entries(results.scenarioSeconds ?? {});
  if (times.length === 0) return [];
  return [
    `Time per scenario (setup included): ${times.map(([name, s]) => `${name} ${s} s`).join(', ')}.`,
    '',
  ];
}

function figureRow(f: Figure): string {
  const cells = [
    `${f.scenario}: ${f.name}`,
    `${cell(f.ours, f.unit)} ${f.unit}`,
    f.baseline?.name ?? '–',
    f.baseline ? `${cell(f.baseline.value, f.unit)} ${f.unit}` : '–',
    f.ratio === undefined ? '–' : formatRatio(f.ratio),
    f.target?.text ?? '–',
    f.target ? (f.target.met ? 'met' : '**not met**') : '–',
  ];
  return `| ${cells.join(' | ')} |`;
}

function latencyRows(points: readonly LatencyPoint[]): string[] {
  return points.map((p) => {
    const blog = points.find(
      (b) => b.transport === p.transport && b.offeredRate === p.offeredRate && b.config === 'blog-1s',
    );
    const vsBlog = blog && p.config !== 'blog-1s' ? formatRatio(p.p99.median / blog.p99.median) : '–';
    return `| ${[
      p.transport,
      p.label,
      `${p.offeredRate} → ${Math.round(p.achievedRate)}`,
      cell(p.p50, 'ms'),
      cell(p.p95, 'ms'),
      cell(p.p99, 'ms'),
      cell(p.max, 'ms'),
      vsBlog,
      p.toBrokerP50 && p.toBrokerP99
        ? `${formatValue(p.toBrokerP50.median, 'ms')} / ${formatValue(p.toBrokerP99.median, 'ms')}`
        : '–',
      cpuCell(p.cpuUsPerMessage),
      p.machine ? `${p.machine.busyPct}% / ${p.machine.stealPct}%, ${p.machine.load.toFixed(1)}` : '–',
    ].join(' | ')} |`;
  });
}

/** CPU µs per delivered message: `bench / consumer / postgres / broker` (`–` when not measured). */
function cpuCell(cpu: LatencyPoint['cpuUsPerMessage']): string {
  if (!cpu) return '–';
  return ['bench', 'consumer', 'postgres', 'broker']
    .map((group) => (cpu[group] === undefined ? '–' : Math.round(cpu[group]).toLocaleString('en-US')))
    .join(' / ');
}

/** `median (min–max, n)`, or just the median for a single run. */
export function cell(s: Summary, unit: string): string {
  const f = (v: number) => formatValue(v, unit);
  if (s.values.length <= 1) return f(s.median);
  return `${f(s.median)} (${f(s.min)}–${f(s.max)}, ${s.values.length})`;
}

export function formatValue(value: number, unit: string): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (unit === 'ms') return value < 10 ? value.toFixed(1) : Math.round(value).toLocaleString('en-US');
  if (value < 10) return value.toFixed(2);
  return Math.round(value).toLocaleString('en-US');
}

export function formatRatio(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value < 0.1 ? value.toFixed(3) : value.toFixed(2);
}

/** `readme` with the block between the markers replaced by `block`. */
export function replaceResults(readme: string, block: string): string {
  const start = readme.indexOf(RESULTS_START);
  const end = readme.indexOf(RESULTS_END);
  if (start < 0 || end < start)
    throw new Error(`bench/README.md lacks the ${RESULTS_START} … ${RESULTS_END} markers`);
  return `${readme.slice(0, start + RESULTS_START.length)}\n${block}\n${readme.slice(end)}`;
}
