/**
 * kafkajs and amqplib are optional peers: an application installs the one its broker needs. Every entry point
 * of the package (and the CLI) must load with either one missing; only asking for the missing broker's
 * feature names what to install. (The compatibility matrix found `nest-messaging` on RabbitMQ failing with
 * "Cannot find module 'kafkajs'" after replay loaded Kafka's module at the top.)
 */
const ENTRY_POINTS = [
  './index',
  './microservices',
  './redrive',
  './console',
  './testing',
  './cli/messaging-cli',
];

function uninstall(name: string): void {
  jest.doMock(name, () => {
    throw Object.assign(new Error(`Cannot find module '${name}' from 'peer-loading.spec.ts'`), {
      code: 'MODULE_NOT_FOUND',
    });
  });
}

describe('loading the package with one broker client missing', () => {
  afterEach(() => {
    jest.resetModules();
    jest.dontMock('kafkajs');
    jest.dontMock('amqplib');
  });

  for (const missing of ['kafkajs', 'amqplib']) {
    it.each(ENTRY_POINTS)(`loads %s without ${missing}`, (entry) => {
      jest.isolateModules(() => {
        uninstall(missing);
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- the point is loading it
        expect(() => require(entry) as unknown).not.toThrow();
      });
    });
  }
});
