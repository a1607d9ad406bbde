/**
 * Jest's order of suites, with the long ones first: `npm test` runs three workers, and a suite of minutes that
 * starts last leaves one worker idle while it runs. Jest orders by the durations it cached in an earlier run
 * and otherwise by file size; a fresh clone (CI) has no cache, so the known long suites (the cluster failovers,
 * the compatibility matrix, the fault runs, then the end-to-end suites) go first whatever the cache says.
 */
const Sequencer = require('@jest/test-sequencer').default;

const LONG_FIRST = [
  /\/test\/cluster\//,
  /\/test\/compat\//,
  /\/test\/faults\/.*fault-run/,
  /\/test\/faults\//,
  /\/test\/e2e\//,
];

const rank = (test) => {
  const index = LONG_FIRST.findIndex((pattern) => pattern.test(test.path));
  return index === -1 ? LONG_FIRST.length : index;
};

class SlowFirstSequencer extends Sequencer {
  async sort(tests) {
    const ordered = await super.sort(tests);
    // Array.prototype.sort is stable: within a rank, Jest's own order stays.
    return [...ordered].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = SlowFirstSequencer;
