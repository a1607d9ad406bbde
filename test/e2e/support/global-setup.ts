import * as path from 'node:path';
import { buildServices, REPO_ROOT } from '../../../tools/demo/build-services';
import servicesUp from '../../harness/global-setup';
import { E2E_BUILD_DIR_VARIABLE } from './e2e-build';

/**
 * The e2e project's setup: the shared one (services up), then one build of both apps for the whole run,
 * in a folder of the run's own (suites start the apps as `node <entry>` processes; a build elsewhere,
 * `npm run build` or the demo's, never replaces these files under them). Workers inherit the variable.
 */
export default async function e2eGlobalSetup(): Promise<void> {
  await servicesUp();
  const dir = path.join(REPO_ROOT, '.demo', 'e2e', `build-${process.pid}-${Date.now().toString(36)}`);
  const started = Date.now();
  await buildServices(dir);
  process.stderr.write(`[e2e] services built in ${((Date.now() - started) / 1000).toFixed(1)} s (${dir})\n`);
  process.env[E2E_BUILD_DIR_VARIABLE] = dir;
}
