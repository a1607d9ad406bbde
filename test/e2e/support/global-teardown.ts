import { promises as fs } from 'node:fs';
import servicesDown from '../../harness/global-teardown';
import { E2E_BUILD_DIR_VARIABLE } from './e2e-build';

export default async function e2eGlobalTeardown(): Promise<void> {
  const dir = process.env[E2E_BUILD_DIR_VARIABLE];
  if (dir) await fs.rm(dir, { recursive: true, force: true });
  await servicesDown();
}
