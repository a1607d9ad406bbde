/* npm run start:console: the ops console in the foreground, beside `npm run start:post` and `start:subscribe`. */
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { infraEnv } from '../infra/env';
import { checkRabbit, ensureKafka } from '../infra/services';
import { buildServices, REPO_ROOT } from './build-services';
import { consoleBanner, DEMO_DLQ, localAdminDatabase, startOpsConsole } from './ops-console';

/**
 * Local development: the admin database `messaging_admin` on the local PostgreSQL (created and migrated),
 * the broker as its local admin (MESSAGING_TRANSPORT, default kafka, like the services), the demo users and
 * an approver key for each approver, the services' metrics on their default ports (3000, 3001). Runs until
 * interrupted. Production runs `apps/ops-console` with its own environment (docs/guide/09-console.md).
 */
async function main(): Promise<void> {
  const env = infraEnv();
  const transport = process.env.MESSAGING_TRANSPORT === 'rabbitmq' ? 'rabbitmq' : 'kafka';
  const log = (line: string) => console.log(`[console] ${line}`);
  if (transport === 'kafka') await ensureKafka(env, log);
  else await checkRabbit(env.amqpUrl);
  const admin = await localAdminDatabase(env.databaseUrl);
  log(`Admin database messaging_admin ${admin.created ? 'created' : 'found'} and migrated.`);
  const build = await buildServices(path.join(REPO_ROOT, '.demo', 'build'), { reuseFresh: true });
  log(build.elapsedMs > 0 ? `Built in ${(build.elapsedMs / 1000).toFixed(1)} s.` : 'Build up to date.');
  const opsConsole = await startOpsConsole(
    build,
    {
      transport,
      amqpUrl: env.amqpUrl,
      kafkaBrokers: env.kafkaBrokers,
      adminDatabase: { url: admin.url },
      metrics: [
        { name: 'post-service', url: process.env.POST_SERVICE_METRICS ?? 'http://127.0.0.1:3000/metrics' },
        {
          name: 'subscribe-service',
          url: process.env.SUBSCRIBE_SERVICE_METRICS ?? 'http://127.0.0.1:3001/metrics',
        },
      ],
      deadLetterQueues: [DEMO_DLQ],
      dir: mkdtempSync(path.join(os.tmpdir(), 'ops-console-')),
    },
    Number(process.env.PORT ?? '3002'),
  );
  consoleBanner(`${opsConsole.url}/console`).forEach((line) => log(line));
  log(`Log: ${opsConsole.logFile}. Ctrl-C stops it.`);
  const stop = () => void opsConsole.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
