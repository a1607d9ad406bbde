import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CliIo } from './cli-io';
import { runMessagingCli } from './messaging-cli';

/**
 * Issue 45 finding 3: `--local-plaintext` (local development: no identity map) is refused for any broker not
 * on this machine, whatever the SASL setting. Every case is refused before a connection is tried (nothing
 * listens on those hosts, and no admin database is given).
 */
describe('nest-messaging --local-plaintext', () => {
  let folder: string;

  async function cli(args: string[], env: Record<string, string>) {
    let out = '';
    let err = '';
    const io: CliIo = { env, out: (t) => void (out += t), err: (t) => void (err += t), cwd: folder };
    return { code: await runMessagingCli(args, io), out, err };
  }

  beforeAll(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'local-plaintext-'));
    writeFileSync(
      path.join(folder, 'topology.json'),
      JSON.stringify({ destinations: ['orders'], groups: [{ group: 'billing', destination: 'orders' }] }),
    );
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  const saslCluster = {
    MESSAGING_ADMIN_KAFKA_BROKERS: 'kafka.prod.example:9093',
    MESSAGING_ADMIN_KAFKA_SASL: 'scram-sha-512',
    MESSAGING_ADMIN_KAFKA_SSL: 'true',
    MESSAGING_ADMIN_PRINCIPAL: 'ops-jane',
    MESSAGING_ADMIN_PASSWORD: 'secret',
  };

  it('refuses Kafka with SASL on a host that is not this machine (flag or variable), exit 2', async () => {
    for (const [args, env] of [
      [['dlq', 'list', '--local-plaintext'], saslCluster],
      [['dlq', 'list'], { ...saslCluster, MESSAGING_ADMIN_LOCAL_PLAINTEXT: 'true' }],
      [['topology', 'apply', '--file', 'topology.json', '--local-plaintext'], saslCluster],
    ] as const) {
      const refused = await cli([...args], env);
      expect(refused.code).toBe(2);
      expect(refused.err).toMatch(/^Refused: Refused to connect to Kafka as the admin: --local-plaintext/);
      expect(refused.err).toContain('kafka.prod.example:9093');
      expect(refused.err).not.toContain('secret');
    }
  });

  it('refuses a RabbitMQ URL that is not on this machine, in words about RabbitMQ', async () => {
    const refused = await cli(['dlq', 'list', '--local-plaintext', '--queue', 'orders.billing.dlq'], {
      MESSAGING_ADMIN_AMQP_URL: 'amqps://rabbit.prod.example/orders',
    });
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/^Refused: Refused to connect to RabbitMQ as the admin: /);
    expect(refused.err).not.toMatch(/Kafka|SASL/);
  });
});
