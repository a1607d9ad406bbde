import { MissingPeerDependencyError } from '../errors/missing-peer-dependency.error';

/**
 * The optional peer dependencies, with the feature that needs each and the versions it is tested with
 * (kept equal to `peerDependencies` in package.json by a unit spec). Each is loaded only by that feature, so
 * an application on RabbitMQ never loads (or installs) kafkajs.
 */
export const OPTIONAL_PEERS = {
  kafkajs: { feature: 'The Kafka transport', range: '^2.2.4' },
  '@platformatic/kafka': { feature: "The Kafka transport's producerClient 'platformatic'", range: '^1.35.0' },
  amqplib: { feature: 'The RabbitMQ transport', range: '^2.0.0' },
  'prom-client': { feature: 'MessagingMetrics (Prometheus metrics)', range: '^15.0.0' },
  '@opentelemetry/api': { feature: 'Tracing', range: '^1.9.0' },
  '@nestjs/microservices': { feature: 'MessagingServer', range: '^11.0.0 || ^12.0.0' },
  // The database drivers: TypeORM loads the application's; the library never does.
  pg: { feature: 'A PostgreSQL DataSource', range: '^8.11.0' },
  mysql2: { feature: 'A MySQL or MariaDB DataSource', range: '^3.0.0' },
} as const;

/** The name of an optional peer dependency. */
export type OptionalPeer = keyof typeof OPTIONAL_PEERS;

/** Loads an optional peer the feature cannot work without; a missing one is a `MissingPeerDependencyError`. */
export function requirePeer<T>(name: OptionalPeer, feature: string = OPTIONAL_PEERS[name].feature): T {
  const loaded = tryRequirePeer<T>(name);
  if (loaded === undefined) throw missing(name, feature);
  return loaded;
}

/**
 * Loads an optional peer that a feature uses when it is there (tracing, metrics), or `undefined` when the
 * package is not installed. A package that is installed but fails to load still throws.
 */
export function tryRequirePeer<T>(name: OptionalPeer): T | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- optional peers load on first use
    return require(name) as T;
  } catch (error) {
    if (isNotFound(error, name)) return undefined;
    throw error;
  }
}

/** Whether an optional peer is installed, without loading it. */
export function isPeerInstalled(name: OptionalPeer): boolean {
  try {
    require.resolve(name);
    return true;
  } catch (error) {
    if (isNotFound(error, name)) return false;
    throw error;
  }
}

/** Throws a `MissingPeerDependencyError` unless `name` is installed, without loading it. */
export function assertPeerInstalled(name: OptionalPeer, feature?: string): void {
  if (!isPeerInstalled(name)) throw missing(name, feature ?? OPTIONAL_PEERS[name].feature);
}

function missing(name: OptionalPeer, feature: string): MissingPeerDependencyError {
  return new MissingPeerDependencyError(name, feature, versionToInstall(name));
}

/** A Nest package must match the application's Nest major; any other peer, the tested range. */
function versionToInstall(name: OptionalPeer): string {
  if (name.startsWith('@nestjs/')) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- reads the app's Nest version
      const { version } = require('@nestjs/core/package.json') as { version: string };
      return `^${version.split('.')[0]}`;
    } catch {
      // fall through to the range
    }
  }
  return OPTIONAL_PEERS[name].range;
}

function isNotFound(error: unknown, name: string): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    message.includes(`'${name}'`)
  );
}
