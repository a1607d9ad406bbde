import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessagingMetrics } from 'nest-reliable-messaging';
import { exposedNames, mentionedMetrics, tableExpressions } from './metric-names';

const ROOT = join(__dirname, '..', '..');
const RULES = join(ROOT, 'docs', 'ops', 'prometheus-alerts.yml');
const RULE_TESTS = join(ROOT, 'docs', 'ops', 'prometheus-alerts.test.yml');
const DASHBOARD = join(ROOT, 'docs', 'ops', 'grafana-dashboard.json');
const GUIDE = join(ROOT, 'docs', 'guide', '10-operations.md');

/** Debian's `prometheus` package has promtool (.ci/run installs it); without it those cases are skipped. */
const hasPromtool = spawnSync('promtool', ['--version']).error === undefined;
const withPromtool = hasPromtool ? it : it.skip;
if (!hasPromtool) {
  console.warn(
    'promtool is missing (apt-get install prometheus): the promtool checks of docs/ops are skipped',
  );
}

function promtool(...args: string[]): { status: number | null; output: string } {
  const run = spawnSync('promtool', args, { encoding: 'utf8', cwd: join(ROOT, 'docs', 'ops') });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

interface Dashboard {
  panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
}

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
}

describe('docs/ops', () => {
  let defined: Set<string>;
  beforeAll(async () => {
    const metrics = await new MessagingMetrics().registry.getMetricsAsJSON();
    defined = exposedNames(metrics.map(({ name, type }) => ({ name, type: String(type) })));
  });

  describe('prometheus-alerts.yml', () => {
    withPromtool('is accepted by promtool check rules', () => {
      const { status, output } = promtool('check', 'rules', RULES);
      expect(output).toContain('SUCCESS');
      expect(status).toBe(0);
    });

    withPromtool('fires and stays quiet as its promtool tests expect', () => {
      const { status, output } = promtool('test', 'rules', RULE_TESTS);
      expect(output).toContain('SUCCESS');
      expect(status).toBe(0);
    });

    it('uses only metrics the library defines', () => {
      const used = mentionedMetrics(readFileSync(RULES, 'utf8'));
      expect(used.length).toBeGreaterThan(5);
      expect(used.filter((name) => !defined.has(name))).toEqual([]);
    });

    it("holds the guide's alerts, expression for expression", () => {
      const guide = readFileSync(GUIDE, 'utf8');
      const section = guide.slice(guide.indexOf('## Alerts worth having'), guide.indexOf('## Tracing'));
      const expressions = tableExpressions(section).filter((expr) => expr.includes('messaging_'));
      const rules = readFileSync(RULES, 'utf8');
      expect(expressions.length).toBeGreaterThan(5);
      expect(expressions.filter((expr) => !rules.includes(`expr: ${expr}\n`))).toEqual([]);
    });
  });

  describe('grafana-dashboard.json', () => {
    it('uses only metrics the library defines', () => {
      const used = mentionedMetrics(readFileSync(DASHBOARD, 'utf8'));
      expect(used.length).toBeGreaterThan(10);
      expect(used.filter((name) => !defined.has(name))).toEqual([]);
    });

    withPromtool('has panels whose queries are PromQL promtool accepts (as recording rules)', () => {
      const dir = mkdtempSync(join(tmpdir(), 'dashboard-rules-'));
      try {
        const rules = dashboardExpressions().map(
          (expr, i) => `      - record: dashboard:panel_query:${i}\n        expr: ${JSON.stringify(expr)}\n`,
        );
        const file = join(dir, 'dashboard-rules.yml');
        writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('')}`);
        const { status, output } = promtool('check', 'rules', file);
        expect(output).toContain(`SUCCESS: ${rules.length} rules found`);
        expect(status).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
