/** The database servers the demo runs the services on. */
export type DemoDatabase = 'postgres' | 'mariadb';

/** What `npm run demo -- [options]` takes. */
export interface DemoOptions {
  readonly transport: 'kafka' | 'rabbitmq';
  /** Where both services keep their tables, the outbox and the inbox. */
  readonly database: DemoDatabase;
  /** Subscribers of the demo's author. */
  readonly subscribers: number;
  /** Posts per scenario (the blog post sends 10). */
  readonly posts: number;
  /** The window the posts of a burst are spread over, ms (the blog post: 1 s). */
  readonly windowMs: number;
  /** Run against a private Kafka broker / RabbitMQ node of the demo's own instead of the local one. */
  readonly isolated: boolean;
  /**
   * Run against a three-node cluster of the demo's own (issue 19): Kafka topics with replication factor 3 and
   * `min.insync.replicas` 2, or RabbitMQ quorum queues; the outage stops one node.
   */
  readonly cluster: boolean;
  /**
   * post-service's relay (issue 30): `poll` (the outbox table) or `logical` (PostgreSQL's log through a
   * replication slot; on a server with `wal_level = logical`, else on a private cluster the demo starts).
   */
  readonly relay: 'poll' | 'logical';
}

export const DEMO_USAGE = `Usage: npm run demo -- [--transport kafka|rabbitmq] [--database postgres|mariadb]
                       [--relay poll|logical] [--subscribers N] [--posts N] [--isolated | --cluster]

Runs the blog post's two tests against post-service and subscribe-service, started as processes:
  1. normal: N posts within 1 second, every subscriber gets N notifications;
  2. outage: the broker is stopped, N posts within 1 second (all 201), the broker is started again,
     every subscriber gets the N new notifications.
Exits with 1 if any subscriber misses a notification or gets one twice.

  --transport    kafka (default) or rabbitmq
  --database     postgres (default) or mariadb: where both services keep their tables, outbox and inbox
  --relay        poll (default): post-service's relay reads the outbox table; logical: it reads PostgreSQL's
                 log through a replication slot (created first, as an operator would: nest-messaging relay
                 slot create); needs wal_level = logical, so the demo starts a private PostgreSQL cluster
                 when DATABASE_URL's server has another
  --subscribers  subscribers of the demo's author (default 5)
  --posts        posts per scenario (default 10)
  --isolated     use a private Kafka broker / RabbitMQ node on free ports instead of the local one
                 (the outage then leaves the local broker alone; handy while tests run beside the demo)
  --cluster      start a three-node Kafka or RabbitMQ cluster of the demo's own on free ports instead:
                 topics with replication factor 3 and min.insync.replicas 2, or quorum queues; the outage
                 stops one node (Kafka: the leader of post-create[0]; RabbitMQ: the quorum queue's leader)

Environment: DATABASE_URL (the PostgreSQL server) or MARIADB_URL (the MariaDB or MySQL server); the demo
uses their databases post_service and subscribe_service and creates them. KAFKA_BROKERS, AMQP_URL.`;

/** Parses the command line; throws a message with the usage on a bad argument. */
export function parseDemoOptions(argv: readonly string[]): DemoOptions | 'help' {
  const options = {
    transport: 'kafka' as DemoOptions['transport'],
    database: 'postgres' as DemoDatabase,
    subscribers: 5,
    posts: 10,
    isolated: false,
    cluster: false,
    relay: 'poll' as DemoOptions['relay'],
  };
  const args = argv.flatMap((arg) =>
    arg.startsWith('--') && arg.includes('=') ? arg.split(/=(.*)/s, 2) : [arg],
  );
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    const value = () => {
      const next = args[i + 1];
      if (next === undefined || next.startsWith('--'))
        throw new Error(`${arg} needs a value.\n\n${DEMO_USAGE}`);
      i += 1;
      return next;
    };
    const count = (name: string, max: number) => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1 || n > max)
        throw new Error(`${name} must be a whole number from 1 to ${max}.`);
      return n;
    };
    switch (arg) {
      case '-h':
      case '--help':
        return 'help';
      case '--transport': {
        const transport = value();
        if (transport !== 'kafka' && transport !== 'rabbitmq') {
          throw new Error(`--transport must be kafka or rabbitmq, not '${transport}'.`);
        }
        options.transport = transport;
        break;
      }
      case '--database': {
        const database = value();
        if (database !== 'postgres' && database !== 'mariadb') {
          throw new Error(`--database must be postgres or mariadb, not '${database}'.`);
        }
        options.database = database;
        break;
      }
      case '--relay': {
        const relay = value();
        if (relay !== 'poll' && relay !== 'logical') {
          throw new Error(`--relay must be poll or logical, not '${relay}'.`);
        }
        options.relay = relay;
        break;
      }
      case '--subscribers':
        options.subscribers = count('--subscribers', 100);
        break;
      case '--posts':
        options.posts = count('--posts', 1_000);
        break;
      case '--isolated':
        options.isolated = true;
        break;
      case '--cluster':
        options.cluster = true;
        break;
      default:
        throw new Error(`Unknown argument '${arg}'.\n\n${DEMO_USAGE}`);
    }
  }
  if (options.relay === 'logical' && options.database !== 'postgres') {
    throw new Error("--relay logical reads PostgreSQL's log: MySQL and MariaDB keep the polling relay.");
  }
  if (options.isolated && options.cluster) {
    throw new Error("--cluster already runs brokers of the demo's own: drop --isolated.");
  }
  return { ...options, windowMs: 1_000 };
}
