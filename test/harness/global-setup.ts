import { buildLibrary } from '../../tools/infra/library-build';
import { ensureInfrastructure } from '../../tools/infra/services';
import { infraEnv } from './infra';
import { startContainers, wantsContainers } from './containers';

/**
 * Runs once before the integration and end-to-end suites: brings local Kafka up through the same code as
 * `npm run kafka:start`, checks PostgreSQL, MariaDB and RabbitMQ, and fails fast naming what is missing and
 * how to start it. With TEST_INFRA=containers it starts the four services with testcontainers instead. First it
 * builds the library package if its sources changed: the suites import `nest-reliable-messaging` from its
 * build, across the package boundary, as applications do.
 */
export default async function globalSetup(): Promise<void> {
  if (await buildLibrary()) process.stderr.write('[infra] built nest-reliable-messaging\n');
  if (wantsContainers()) {
    await startContainers();
    return;
  }
  await ensureInfrastructure(infraEnv(), (line) => process.stderr.write(`[infra] ${line}\n`));
}
