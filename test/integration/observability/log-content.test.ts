import { Logger, LoggerService } from '@nestjs/common';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { createMessagingApp, rabbitTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { orderPlaced } from '../support/orders.fixture';
import { orderMessage, withBody } from '../support/raw-messages';
import { drainQueue, publishRaw } from '../support/rabbit-wire';
import { useRabbitSuite } from '../support/suite-resources';

/** Every line any Nest logger writes while it is installed, with its level. */
class RecordingLogger implements LoggerService {
  readonly lines: string[] = [];
  private record(level: string, message: unknown, rest: unknown[]): void {
    const text = [message, ...rest]
      .map((part) => (part instanceof Error ? `${part.message}\n${part.stack}` : String(part)))
      .join(' ');
    this.lines.push(`${level}: ${text}`);
  }
  log(message: unknown, ...rest: unknown[]): void {
    this.record('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.record('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.record('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.record('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.record('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.record('fatal', message, rest);
  }
}

/**
 * Guide 10, Logs: a line about a message names its id (and destination, attempt, group), never its payload.
 * A consumer on RabbitMQ gets messages whose payload carries a marker, and every way a message is logged:
 * not JSON, failing its schema, a duplicate, an id reused with another payload, a handler refusing it (dead
 * letter). Nothing any logger wrote may carry the marker.
 */
describe('Log lines about messages (RabbitMQ consumer)', () => {
  const suite = useRabbitSuite('log_content');
  const { rabbit, apps } = suite;
  const recorder = new RecordingLogger();

  afterAll(() => {
    Logger.overrideLogger(new Logger());
  });

  // claim: C-86
  it('names the message id of each message it logs about, and never writes a payload', async () => {
    const marker = `PAYLOAD-MARKER-${Math.random().toString(36).slice(2)}`;
    const destination = uniqueName('log_content');
    const group = uniqueName('g');
    rabbit.track({
      exchanges: [destination],
      queues: [`${destination}.${group}`, `${destination}.${group}.dlq`],
    });
    const probe = new ConsumerProbe();
    probe.refuse.add(4);
    apps.push(
      await createMessagingApp({
        schema: suite.schema.name,
        transport: rabbitTransport(),
        entities: [HandledOrder],
        providers: [
          { provide: ConsumerProbe, useValue: probe },
          ordersConsumer(orderPlaced(destination), group),
        ],
        messaging: { relay: { enabled: false } },
      }),
    );
    // After the testing module installed its own logger: every Nest logger writes here from now on.
    Logger.overrideLogger(recorder);
    const marked = (seq: number, extra: Record<string, unknown> = {}) => {
      const message = orderMessage(destination, { customer: 'kim', seq });
      return withBody(
        message,
        JSON.stringify({ orderId: seq, customer: 'kim', amount: 1, seq, note: marker, ...extra }),
      );
    };
    const good = marked(1);
    const notJson = withBody(marked(2), `not json ${marker}`);
    const badSchema = marked(3, { orderId: `x-${marker}` });
    const refused = marked(4);
    const reused = withBody(
      good,
      JSON.stringify({ orderId: 9, customer: 'kim', amount: 2, seq: 9, note: marker }),
    );
    const connection = await rabbit.connect();
    await publishRaw(connection, [good, good, notJson, badSchema, refused]);
    const dlq = `${destination}.${group}.dlq`;
    await eventually(() => expect(probe.invocations).toBeGreaterThanOrEqual(2));
    await publishRaw(connection, [reused]);
    const channel = await connection.createChannel();
    await eventually(async () => expect((await channel.checkQueue(dlq)).messageCount).toBe(4), 60_000);
    await channel.close();
    const parked = await drainQueue(connection, dlq);

    const failureCodes = parked.map((m) => String(m.properties.headers?.['msg.failure-code']));
    expect(failureCodes).toEqual(
      expect.arrayContaining(['INVALID_JSON', 'SCHEMA_MISMATCH', 'FORBIDDEN', 'ID_CONFLICT']),
    );
    const lines = recorder.lines;
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.includes(marker))).toEqual([]);
    for (const message of [notJson, badSchema, refused, reused]) {
      const id = message.headers['msg.id'];
      const logged = lines.some((line) => line.includes(id) && line.includes(destination));
      expect({ id, logged }).toEqual({ id, logged: true });
    }
  });
});
