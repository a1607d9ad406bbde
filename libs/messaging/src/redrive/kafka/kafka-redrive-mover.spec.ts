import { Admin, Kafka, ProducerConfig, ProducerRecord } from 'kafkajs';
import { WireMessage } from '../../envelope/wire-message';
import { DeadLetterRecord } from '../dead-letter-record';
import { PlannedMessage, RedrivePlan } from '../redrive-plan';
import { RedriveCluster } from './kafkajs-cluster.patch';
import { KafkaRedriveMover } from './kafka-redrive-mover';
import { readPlanned } from './kafka-planned-records';
import { forwardOnly } from './forward-only';
import { commitRedriveOffsets } from './redrive-group-commit';

// The broker side is scripted: the planned records read back as they were, offsets commit at once. What is
// under test is the mover's own waiting on the producer.
jest.mock('./kafka-planned-records', () => ({
  ...jest.requireActual<object>('./kafka-planned-records'),
  readPlanned: jest.fn(),
}));
jest.mock('./forward-only', () => ({ forwardOnly: jest.fn() }));
jest.mock('./redrive-group-commit', () => ({ commitRedriveOffsets: jest.fn() }));

const SOURCE = 'orders.billing.dlq';

function planned(offset: number): PlannedMessage {
  return {
    position: { kind: 'partition', partition: 0, offset: String(offset) },
    messageId: `m-${offset}`,
    type: 'OrderPlaced',
    failureCategory: 'TRANSIENT',
    failureCode: null,
    attempts: 3,
    originDestination: 'orders',
    lastFailureAt: null,
    redriveCount: 0,
    previousRedriveIds: [],
    fingerprint: `sha256:${offset}`,
  };
}

function record(message: PlannedMessage): DeadLetterRecord {
  return {
    position: message.position,
    wire: {
      destination: SOURCE,
      key: 'k',
      headers: { 'msg.id': message.messageId! },
      body: Buffer.from('{}'),
    },
  };
}

/**
 * A kafkajs client of one partition whose producer connects, places each message with the producer's own
 * partitioner (as kafkajs does), then answers as `answer` says.
 */
function kafkaWhoseProducer(answer: () => Promise<unknown>): { kafka: Kafka; disconnects: () => number } {
  let disconnects = 0;
  const producer = (config: ProducerConfig) => {
    const choose = config.createPartitioner!();
    const partitionMetadata = [{ partitionId: 0, leader: 0, partitionErrorCode: 0, replicas: [0], isr: [0] }];
    return {
      connect: async () => undefined,
      disconnect: async () => void disconnects++,
      send: async (record: ProducerRecord) => {
        record.messages.forEach((message) => choose({ topic: record.topic, partitionMetadata, message }));
        return answer();
      },
    };
  };
  return { kafka: { producer } as unknown as Kafka, disconnects: () => disconnects };
}

describe(KafkaRedriveMover.name, () => {
  const messages = [planned(0), planned(1)];
  const plan = {
    version: 2,
    transport: 'kafka',
    plannedBy: 'alice',
    source: SOURCE,
    target: 'orders',
    group: 'billing',
    createdAt: '2026-12-05T00:00:00.000Z',
    depth: 2,
    messages,
  } as unknown as RedrivePlan;
  const copyOf = (r: DeadLetterRecord): WireMessage => ({ ...r.wire, destination: 'orders' });

  beforeEach(() => {
    jest.mocked(readPlanned).mockResolvedValue({ 0: messages.map(record) });
    jest.mocked(forwardOnly).mockImplementation(async (_admin, _topic, entries) => entries as never);
    jest.mocked(commitRedriveOffsets).mockResolvedValue(undefined);
  });

  const mover = (kafka: Kafka, publishTimeoutMs: number) =>
    new KafkaRedriveMover(
      kafka,
      async () => ({}) as Admin,
      async () => ({}) as RedriveCluster,
      publishTimeoutMs,
    );

  it('answers NOT_CONFIRMED when the broker never confirms a copy, instead of waiting on the client (ops-console e2e hung 90 s)', async () => {
    const { kafka, disconnects } = kafkaWhoseProducer(() => new Promise(() => undefined));
    const outcomes = await mover(kafka, 50).move(plan, copyOf, () => undefined);

    expect(outcomes.map((o) => o.status)).toEqual(['NOT_CONFIRMED', 'NOT_ATTEMPTED']);
    expect(outcomes[0].error).toMatch(/^AMBIGUOUS: no confirmation of the redriven copy within 50 ms/);
    // Nothing was confirmed: the redrive group's offset stays where it was, and the client starts afresh.
    expect(commitRedriveOffsets).not.toHaveBeenCalled();
    expect(disconnects()).toBe(1);
  });

  it('moves every copy the broker confirms and commits past the last', async () => {
    const { kafka } = kafkaWhoseProducer(async () => [
      { topicName: 'orders', partition: 0, errorCode: 0, baseOffset: '7' },
    ]);
    const outcomes = await mover(kafka, 1_000).move(plan, copyOf, () => undefined);

    expect(outcomes.map((o) => o.status)).toEqual(['REDRIVEN', 'REDRIVEN']);
    expect(commitRedriveOffsets).toHaveBeenCalledWith(expect.anything(), SOURCE, [
      { partition: 0, offset: '2' },
    ]);
  });
});
