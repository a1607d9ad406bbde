/*
 * `npm run test:faults [-- --soak] [--minutes N] [--seed N] [jest options]`: the `faults` jest project.
 *
 *   --soak       the long soak (FAULTS_SOAK=1): thousands of posts over --minutes (default 10) per transport,
 *                with the fault runs only (the bad-input suites run in the short form)
 *   --chaos      chaos mode's long form (FAULTS_CHAOS=1): the services' broker and database links behind fault
 *                proxies (lost answers, cuts, delays, black holes) mixed with kills and restarts, --minutes
 *                (default 10) per broker × database pair
 *   --minutes N  the soak's or chaos run's load duration (FAULTS_SOAK_MINUTES)
 *   --seed N     replay the fault schedule of an earlier run (FAULTS_SEED; every run prints its seed)
 *
 * Anything else goes to jest, e.g. `--testPathPatterns kafka` for one transport.
 */
import { runJest } from '../../../tools/test/run-jest';

function main(): void {
  const args = process.argv.slice(2);
  const env: NodeJS.ProcessEnv = { ...process.env };
  const jestArgs = ['--selectProjects', 'faults'];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = () => {
      const next = args[++i];
      if (next === undefined) throw new Error(`${arg} needs a value.`);
      return next;
    };
    if (arg === '--soak') env.FAULTS_SOAK = '1';
    else if (arg === '--chaos') env.FAULTS_CHAOS = '1';
    else if (arg === '--minutes') env.FAULTS_SOAK_MINUTES = value();
    else if (arg === '--seed') env.FAULTS_SEED = value();
    else jestArgs.push(arg);
  }
  if (env.FAULTS_CHAOS === '1' || env.FAULTS_CHAOS === 'true')
    jestArgs.push('--testPathPatterns', 'chaos-run');
  else if (env.FAULTS_SOAK === '1' || env.FAULTS_SOAK === 'true')
    jestArgs.push('--testPathPatterns', 'fault-run');
  void runJest(jestArgs, env).then((code) => process.exit(code));
}

main();
