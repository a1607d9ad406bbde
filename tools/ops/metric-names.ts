/** A metric the library defines: its name and Prometheus type. */
export interface DefinedMetric {
  readonly name: string;
  readonly type: string;
}

/** What a histogram is exposed as besides its name (PromQL reads the buckets, the sum and the count). */
const HISTOGRAM_SERIES = ['_bucket', '_sum', '_count'];

/** Every series name a metric is exposed under: a histogram's three, anything else's own. */
export function exposedNames(metrics: readonly DefinedMetric[]): Set<string> {
  const names = new Set<string>();
  for (const { name, type } of metrics) {
    if (type === 'histogram') HISTOGRAM_SERIES.forEach((suffix) => names.add(name + suffix));
    else names.add(name);
  }
  return names;
}

/** The library's metric names `text` mentions (anything starting `messaging_`), sorted, each once. */
export function mentionedMetrics(text: string): string[] {
  return [...new Set(text.match(/\bmessaging_[a-z0-9_]+/g) ?? [])].sort();
}

/** The PromQL expressions of a Markdown table's rows (the first code span of each row's second cell). */
export function tableExpressions(markdownSection: string): string[] {
  return markdownSection
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) => /`([^`]+)`/.exec(line.split('|')[2] ?? '')?.[1])
    .filter((expr): expr is string => expr !== undefined);
}
