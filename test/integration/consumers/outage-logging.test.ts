import { Logger } from '@nestjs/common';
import { KafkaBroker } from '../../../tools/infra/kafka-broker';
import { eventually } from '../../harness/eventually';
import { startPrivateBroker, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { RabbitMqNode, startPrivateRabbitNode } from '../../harness/rabbitmq-node';
import { RawKafkaProducer } from '../support/kafka-wire';
import { rabbitTransport } from '../support/messaging-app';
import { ordersConsumerApp } from '../support/orders-consumer-app';
import { ConsumerProbe } from '../support/orders-consumer.fixture';
import { orderMessage } from '../support/raw-messages';
import { publishRaw } from '../support/rabbit-wire';
import * as amqp from 'amqplib';

/** How long the broker stays down: the scenario, not a synchronisation. */
const OUTAGE_MS = 8_000;

/**
 * During a broker outage a consumer says that the broker fails, then (every 30 s) that it still does, then
 * that it works again: a handful of lines an operator reads, not one per failed reconnect.
 */
describe.each(['kafka', 'rabbitmq'] as const)(
  'What a consumer logs during a broker outage (%s)',
  (transport) => {
    let schema: TestSchema;
    let kafkaBroker: KafkaBroker | undefined;
    let rabbitNode: RabbitMqNode | undefined;

    beforeAll(async () => {
      schema = await createTestSchema(`outage_log_${transport}`);
      if (transport === 'kafka') kafkaBroker = await startPrivateBroker();
      else rabbitNode = await startPrivateRabbitNode();
    });

    afterAll(async () => {
      await kafkaBroker?.destroy();
      await rabbitNode?.destroy();
      await schema.drop();
    });

    // claim: C-87
    it('logs the outage, not every failed reconnect', async () => {
      const destination = uniqueName('outage');
      const group = uniqueName('g');
      const probe = new ConsumerProbe();
      const app = await ordersConsumerApp(schema.name, {
        transport:
          transport === 'kafka'
            ? { kind: 'kafka', brokers: kafkaBroker!.brokers, sessionTimeoutMs: 6_000 }
            : rabbitTransport(rabbitNode!.url),
        destination,
        group,
        probe,
      });
      const send = async (seq: number) => {
        const message = orderMessage(destination, { customer: 'k', seq });
        if (transport === 'kafka') {
          const raw = new RawKafkaProducer(testKafka(kafkaBroker!.brokers));
          await raw.send([message]);
          await raw.stop();
        } else {
          const connection = await amqp.connect(rabbitNode!.url);
          await publishRaw(connection, [message]);
          await connection.close();
        }
      };
      try {
        await send(1);
        await eventually(() => probe.invocations >= 1);
        const warnings: string[] = [];
        const infos: string[] = [];
        const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
          warnings.push(String(message));
        });
        const log = jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => {
          infos.push(String(message));
        });
        if (transport === 'kafka') await kafkaBroker!.stop();
        else await rabbitNode!.stopApp();
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
        const duringOutage = [...warnings];
        if (transport === 'kafka') await kafkaBroker!.start();
        else await rabbitNode!.startApp();
        await send(2);
        await eventually(() => probe.invocations >= 2, 90_000);
        console.log(
          `[outage-logging] ${transport}: ${duringOutage.length} warnings in ${OUTAGE_MS} ms:\n` +
            duringOutage.slice(0, 10).join('\n'),
        );
        // The connection lost (RabbitMQ) and the first failure; a summary would come after 30 s.
        expect(duringOutage.length).toBeLessThanOrEqual(2);
        await eventually(() => expect(infos.filter((line) => line.includes('works again'))).toHaveLength(1));
        warn.mockRestore();
        log.mockRestore();
      } finally {
        await app.close();
      }
    });
  },
);
