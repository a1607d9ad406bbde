/* npm run demo: the main job. For now it brings the infrastructure up and says what is not built yet. */
import { ensureInfrastructure } from '../infra/services';
import { infraEnv } from '../infra/env';

async function main(): Promise<number> {
  const env = infraEnv();
  console.log(
    'Bringing the infrastructure up (PostgreSQL and RabbitMQ as found, Kafka through the project scripts)...',
  );
  await ensureInfrastructure(env, (line) => console.log(`  ${line}`));
  console.log(
    `Infrastructure ready: PostgreSQL ${env.databaseUrl}, Kafka ${env.kafkaBrokers.join(',')}, RabbitMQ ${env.amqpUrl}.`,
  );
  console.log('The demo services (post-service, subscribe-service) are not built yet: nothing else to run.');
  return 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
