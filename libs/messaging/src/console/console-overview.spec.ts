import { Logger } from '@nestjs/common';
import { RedriveService } from '../redrive/redrive.service';
import { withOldest } from './console-overview';

/** A RedriveService that counts its reads of DLQ heads. */
const fakeRedrive = (transport: 'rabbitmq' | 'kafka') => {
  const reads: string[] = [];
  const redrive = {
    transport,
    inspect: async (name: string) => {
      reads.push(name);
      return [{ message: { lastFailureAt: '2026-12-06T10:00:00.000Z' }, firstFailureAt: null }];
    },
  } as unknown as RedriveService;
  return { redrive, reads };
};

const queues = [
  { name: 'orders.billing.dlq', exists: true, depth: 3 },
  { name: 'orders.mail.dlq', exists: true, depth: 0 },
];
const logger = new Logger('test');

describe(withOldest.name, () => {
  // Issue 45 finding 7: every read of a quorum DLQ's head counts toward its delivery limit.
  it('reads no RabbitMQ DLQ on a page refresh, and shows the age last read', async () => {
    const { redrive, reads } = fakeRedrive('rabbitmq');
    const known = new Map<string, string | undefined>();
    const first = await withOldest(redrive, queues, logger, false, known);
    expect(reads).toEqual(['orders.billing.dlq']);
    for (let i = 0; i < 30; i++) {
      const refreshed = await withOldest(redrive, queues, logger, true, known);
      expect(refreshed).toEqual(first);
    }
    expect(reads).toEqual(['orders.billing.dlq']);
  });

  it('still reads on a view the user asked for, and on Kafka (a read counts nothing there)', async () => {
    const rabbit = fakeRedrive('rabbitmq');
    await withOldest(rabbit.redrive, queues, logger, false);
    await withOldest(rabbit.redrive, queues, logger, false);
    expect(rabbit.reads).toHaveLength(2);
    const kafka = fakeRedrive('kafka');
    await withOldest(kafka.redrive, queues, logger, true);
    expect(kafka.reads).toHaveLength(1);
  });
});
