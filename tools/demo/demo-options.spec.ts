import { parseDemoOptions } from './demo-options';

describe(parseDemoOptions.name, () => {
  it('runs the blog post scenario over Kafka by default', () => {
    expect(parseDemoOptions([])).toEqual({
      transport: 'kafka',
      database: 'postgres',
      subscribers: 5,
      posts: 10,
      windowMs: 1_000,
      isolated: false,
      cluster: false,
      relay: 'poll',
    });
  });

  it('takes flags with a space or an equals sign', () => {
    expect(parseDemoOptions(['--transport', 'rabbitmq', '--subscribers=3', '--isolated'])).toMatchObject({
      transport: 'rabbitmq',
      subscribers: 3,
      isolated: true,
    });
  });

  // claim: C-9
  it('runs the services on MariaDB with --database mariadb', () => {
    expect(parseDemoOptions(['--database', 'mariadb'])).toMatchObject({ database: 'mariadb' });
    expect(parseDemoOptions(['--database=postgres', '--transport=rabbitmq'])).toMatchObject({
      database: 'postgres',
      transport: 'rabbitmq',
    });
  });

  it('runs against a three-node cluster of its own with --cluster, not together with --isolated', () => {
    expect(parseDemoOptions(['--cluster'])).toMatchObject({ transport: 'kafka', cluster: true });
    expect(parseDemoOptions(['--cluster', '--transport=rabbitmq'])).toMatchObject({
      transport: 'rabbitmq',
      cluster: true,
    });
    expect(() => parseDemoOptions(['--cluster', '--isolated'])).toThrow('drop --isolated');
  });

  it("runs post-service's logical relay with --relay logical, on PostgreSQL only", () => {
    expect(parseDemoOptions(['--relay', 'logical'])).toMatchObject({
      relay: 'logical',
      database: 'postgres',
    });
    expect(() => parseDemoOptions(['--relay=logical', '--database=mariadb'])).toThrow(
      'keep the polling relay',
    );
    expect(() => parseDemoOptions(['--relay', 'cdc'])).toThrow("--relay must be poll or logical, not 'cdc'");
  });

  it('answers help', () => {
    expect(parseDemoOptions(['--help'])).toBe('help');
  });

  it('refuses unknown transports, bad counts and unknown flags', () => {
    expect(() => parseDemoOptions(['--transport', 'nats'])).toThrow('--transport must be kafka or rabbitmq');
    expect(() => parseDemoOptions(['--posts', '0'])).toThrow('--posts must be a whole number');
    expect(() => parseDemoOptions(['--database', 'sqlite'])).toThrow(
      "--database must be postgres or mariadb, not 'sqlite'",
    );
    expect(() => parseDemoOptions(['--fast'])).toThrow("Unknown argument '--fast'");
    expect(() => parseDemoOptions(['--transport'])).toThrow('--transport needs a value');
  });
});
