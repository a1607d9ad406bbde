import {
  checkMariadb,
  checkPostgres,
  checkRabbit,
  ensureInfrastructure,
  ServiceUnavailableError,
} from '../../../tools/infra/services';
import { infraEnv } from '../../harness/infra';
import { freePort } from '../../harness/kafka';

/** The global setup fails fast and names the missing service and how to start it. */
describe('service checks', () => {
  it('names PostgreSQL and how to start it when nothing answers', async () => {
    const port = await freePort();
    const error = await checkPostgres(`postgres://postgres@127.0.0.1:${port}/postgres`).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as Error).message).toMatch(/PostgreSQL is not reachable .*pg_ctlcluster/);
  });

  it('names MariaDB and how to start it, hiding the password', async () => {
    const port = await freePort();
    const error = await checkMariadb(`mysql://root:secret@127.0.0.1:${port}/test`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as Error).message).toMatch(
      /MariaDB is not reachable at mysql:\/\/root:\*\*\*@.*\/etc\/init.d\/mariadb start .*MARIADB_URL/,
    );
    expect((error as Error).message).not.toContain('secret');
  });

  it('names RabbitMQ and hides the password', async () => {
    const port = await freePort();
    const error = await checkRabbit(`amqp://guest:secret@127.0.0.1:${port}`).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /RabbitMQ is not reachable at amqp:\/\/guest:\*\*\*@.*rabbitmq-server -detached/,
    );
    expect((error as Error).message).not.toContain('secret');
  });

  it('lists every missing service at once, and does not start Kafka when KAFKA_BROKERS is set', async () => {
    const [pg, kafka] = await Promise.all([freePort(), freePort()]);
    const env = infraEnv({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${pg}/postgres`,
      KAFKA_BROKERS: `127.0.0.1:${kafka}`,
      AMQP_URL: infraEnv().amqpUrl,
    });
    const error = await ensureInfrastructure(env).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/PostgreSQL is not reachable/);
    expect((error as Error).message).toMatch(/Kafka is not reachable .*KAFKA_BROKERS is set/);
    expect((error as Error).message).not.toMatch(/RabbitMQ/);
  });
});
