import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KafkaBroker } from '../../tools/infra/kafka-broker';
import { freePort } from '../../tools/infra/ports';
import { FaultProxy, WireProtocol } from './fault-proxy';

/** A private Kafka broker with a listener behind a fault proxy. */
export interface ProxiedKafka {
  readonly broker: KafkaBroker;
  readonly proxy: FaultProxy;
  /** Bootstrap through the proxy: the broker's metadata sends these clients back to the proxy. */
  readonly brokers: string[];
  /** Bootstrap straight to the broker (a witness, the test's admin): the proxy's faults do not touch them. */
  readonly directBrokers: string[];
  /** Closes the proxy, stops the broker and removes its data. */
  destroy(): Promise<void>;
}

/**
 * A Kafka broker of the suite's own (like `startPrivateBroker()`) with two client listeners: its usual one,
 * and one whose advertised address is a fault proxy's, so that the library under test reaches the broker
 * only through the proxy (the first connection and every one the metadata names).
 */
export async function startProxiedKafka(): Promise<ProxiedKafka> {
  const proxiedPort = await freePort();
  const proxy = await FaultProxy.start({
    target: { host: '127.0.0.1', port: proxiedPort },
    protocol: 'kafka',
    name: 'Kafka',
  });
  const broker = new KafkaBroker({
    port: await freePort(),
    controllerPort: await freePort(),
    stateDir: mkdtempSync(path.join(os.tmpdir(), 'kafka-proxied-')),
    heap: '384m',
    proxied: { port: proxiedPort, advertisedPort: proxy.port },
  });
  try {
    await broker.start();
  } catch (error) {
    await proxy.close();
    await broker.destroy();
    throw error;
  }
  return {
    broker,
    proxy,
    brokers: [proxy.address],
    directBrokers: broker.brokers,
    async destroy() {
      await proxy.close();
      await broker.destroy();
    },
  };
}

/** A fault proxy in front of the server `url` names (PostgreSQL, MySQL/MariaDB, AMQP), and `url` through it. */
export async function proxyUrl(
  url: string,
  protocol: WireProtocol,
  name?: string,
): Promise<{ readonly proxy: FaultProxy; readonly url: string }> {
  const parsed = new URL(url);
  const port = Number(parsed.port || DEFAULT_PORTS[parsed.protocol]);
  if (!Number.isInteger(port)) throw new Error(`No port in ${url} and none known for ${parsed.protocol}`);
  const proxy = await FaultProxy.start({ target: { host: parsed.hostname, port }, protocol, name });
  parsed.hostname = '127.0.0.1';
  parsed.port = String(proxy.port);
  return { proxy, url: parsed.toString() };
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  'postgres:': 5432,
  'postgresql:': 5432,
  'mysql:': 3306,
  'mariadb:': 3306,
  'amqp:': 5672,
};
