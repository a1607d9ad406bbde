/**
 * `npm run lint`: every check, the independent ones side by side (the machines have two cores and each check
 * uses one), each one's output printed whole when it ends, with its time. The package checks come last, alone:
 * they read the build the others also read.
 */
import { spawn } from 'node:child_process';

type Step = readonly [name: string, command: string];

/** Two lanes run side by side; within a lane, one step after the other. */
const LANES: ReadonlyArray<readonly Step[]> = [
  [
    ['typecheck', 'npm run -s typecheck'],
    ['import cycles', 'npm run -s lint:cycles'],
    ['layers', 'npm run -s lint:layers'],
    ['README snippets', 'tsx tools/docs/snippets.ts --check'],
    ['claims ledger', 'tsx tools/claims/check-claims.ts'],
  ],
  [
    ['eslint', 'eslint .'],
    ['prettier', 'prettier --check .'],
  ],
];
const LAST: readonly Step[] = [['package', 'npm run -s lint:package']];

interface Outcome {
  readonly name: string;
  readonly ok: boolean;
  readonly seconds: number;
}

function runStep([name, command]: Step): Promise<Outcome> {
  const begun = Date.now();
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('close', (code) => {
      const seconds = (Date.now() - begun) / 1000;
      const text = Buffer.concat(output).toString().trimEnd();
      process.stdout.write(
        `── ${name} (${command}): ${code === 0 ? 'ok' : 'FAILED'}, ${seconds.toFixed(0)} s\n`,
      );
      if (text) process.stdout.write(`${text}\n`);
      resolve({ name, ok: code === 0, seconds });
    });
  });
}

async function runLane(steps: readonly Step[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const step of steps) outcomes.push(await runStep(step));
  return outcomes;
}

async function main(): Promise<void> {
  const begun = Date.now();
  const outcomes = (await Promise.all(LANES.map(runLane))).flat();
  outcomes.push(...(await runLane(LAST)));
  const failed = outcomes.filter((o) => !o.ok).map((o) => o.name);
  const total = ((Date.now() - begun) / 1000).toFixed(0);
  process.stdout.write(
    failed.length === 0
      ? `lint: all ${outcomes.length} checks passed in ${total} s\n`
      : `lint FAILED: ${failed.join(', ')}\n`,
  );
  process.exitCode = failed.length === 0 ? 0 : 1;
}

void main();
