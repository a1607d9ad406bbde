/**
 * Prints the slowest suites at the end of a Jest run (and writes every suite's time to
 * `.jest-times.json`, git-ignored), so that a CI log says where `npm test`'s minutes went.
 */
const fs = require('node:fs');
const path = require('node:path');

const SHOWN = 15;

class SlowestSuitesReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.suites = [];
  }

  onTestResult(test, result) {
    const { start, end } = result.perfStats;
    if (!start || !end) return;
    this.suites.push({ path: path.relative(this.rootDir, test.path), seconds: (end - start) / 1000 });
  }

  onRunComplete() {
    if (this.suites.length === 0) return;
    const sorted = [...this.suites].sort((a, b) => b.seconds - a.seconds);
    const total = sorted.reduce((sum, suite) => sum + suite.seconds, 0);
    const lines = sorted
      .slice(0, SHOWN)
      .map((suite) => `${suite.seconds.toFixed(0).padStart(6)} s  ${suite.path}`);
    process.stdout.write(
      `\nSlowest suites (of ${sorted.length}; ${total.toFixed(0)} s in all, summed over workers):\n${lines.join('\n')}\n`,
    );
    try {
      fs.writeFileSync(path.join(this.rootDir, '.jest-times.json'), JSON.stringify(sorted, null, 1));
    } catch {
      // The summary above is what matters; a read-only checkout is no reason to fail the run.
    }
  }
}

module.exports = SlowestSuitesReporter;
