import { ensureInfrastructure } from '../../tools/infra/services';
import { infraEnv } from './infra';
import { startContainers, wantsContainers } from './containers';

/**
 * Runs once before the integration and end-to-end suites: brings local Kafka up through the same code as
 * `npm run kafka:start`, checks PostgreSQL and RabbitMQ, and fails fast naming what is missing and how to
 * start it. With TEST_INFRA=containers it starts the three services with testcontainers instead.
 */
export default async function globalSetup(): Promise<void> {
  if (wantsContainers()) {
    await startContainers();
    return;
  }
  await ensureInfrastructure(infraEnv(), (line) => process.stderr.write(`[infra] ${line}\n`));
}
