import * as path from 'node:path';
import { uniqueName } from '../../harness/names';
import { KafkaTopics } from '../../harness/kafka';
import { PostgresCluster } from '../../harness/postgres-cluster';
import { createTestSchema } from '../../harness/postgres';
import { RabbitFixture } from '../../harness/rabbitmq';
import { infraEnv } from '../../harness/infra';
import { FixtureProcess } from '../support/child-process';
import { createLogicalSchema, startLogicalCluster } from '../support/logical-cluster';

const APP = path.join(__dirname, '../support/instrumented-app.ts');

interface Cell {
  readonly instrument: 'observe' | 'proxy';
  readonly transport: 'kafka' | 'rabbitmq';
  readonly relay: 'polling' | 'logical';
}

/** Each instrument over both relays' bootstrap paths, on both brokers between them. */
const CELLS: readonly Cell[] = [
  { instrument: 'observe', transport: 'kafka', relay: 'polling' },
  { instrument: 'observe', transport: 'rabbitmq', relay: 'logical' },
  { instrument: 'proxy', transport: 'rabbitmq', relay: 'polling' },
  { instrument: 'proxy', transport: 'kafka', relay: 'logical' },
];

/**
 * Issue 37 item 1: `nest new` on Nest 12 starts the app with `NestFactory.create(AppModule, { instrument:
 * ObserveInstrument })`, which wraps every provider in a Proxy. Started so, with `@nestjs/observe`'s own
 * instrument and with a plain Proxy tracer, the library's app starts (relay, consumers), relays an order its
 * handler takes, answers its health checks and status, and closes cleanly. (It threw from
 * `RelayTimers.startPoll` at bootstrap: the clock given to DI was frozen.)
 */
describe('An application started with an instrument (Nest 12 template, @nestjs/observe, Proxy tracers)', () => {
  const topics = new KafkaTopics();
  const rabbit = new RabbitFixture();
  const processes: FixtureProcess[] = [];
  const drops: Array<() => Promise<void>> = [];
  let cluster: PostgresCluster | undefined;

  afterAll(async () => {
    for (const child of processes) await child.kill();
    for (const drop of drops) await drop().catch(() => undefined);
    await cluster?.destroy();
    await topics.cleanup();
    await rabbit.cleanup();
  }, 120_000);

  it.each(CELLS.map((cell) => [`${cell.instrument}, ${cell.transport}, ${cell.relay} relay`, cell] as const))(
    '%s: starts, relays and handles a message, reports health, closes',
    async (_name, cell) => {
      const destination = uniqueName(`instr_${cell.transport}`);
      const group = uniqueName('instr_g');
      if (cell.transport === 'kafka') topics.track(destination, `${destination}.${group}.dlq`);
      else rabbit.trackConsumer(destination, group);
      let databaseUrl = infraEnv().databaseUrl;
      let schemaName: string;
      if (cell.relay === 'logical') {
        cluster ??= await startLogicalCluster('instrumented');
        const schema = await createLogicalSchema(cluster, 'instr_logical');
        databaseUrl = cluster.url;
        schemaName = schema.name;
      } else {
        const schema = await createTestSchema('instr_poll');
        drops.push(() => schema.drop());
        schemaName = schema.name;
      }
      const app = new FixtureProcess(APP, {
        DATABASE_URL: databaseUrl,
        SCHEMA: schemaName,
        TRANSPORT: cell.transport,
        RELAY: cell.relay,
        INSTRUMENT: cell.instrument,
        DESTINATION: destination,
        GROUP: group,
      });
      processes.push(app);
      await app.start(120_000);
      const line = app.log.split('\n').find((l) => l.startsWith('RESULT '));
      const result = JSON.parse((line ?? 'RESULT {}').slice('RESULT '.length)) as Record<string, unknown>;
      if (app.exit !== undefined || !line) throw new Error(app.log);
      expect(result).toMatchObject({
        handled: ['ann:1'],
        health: {
          database: { status: 'up' },
          broker: { status: 'up', transport: cell.transport },
          outbox: { status: 'up' },
          relay: { status: 'up', mode: cell.relay === 'logical' ? 'logical' : 'poll' },
          heldMessages: { status: 'up', held: 0 },
        },
        status: { transport: { kind: cell.transport, connected: true }, consumers: [group] },
      });
      await app.terminate();
      expect({ exit: app.exit, closed: app.log.includes('CLOSED') }).toEqual({ exit: '0', closed: true });
      expect(app.log).not.toMatch(/TypeError|on proxy|incompatible receiver/);
    },
    180_000,
  );
});
