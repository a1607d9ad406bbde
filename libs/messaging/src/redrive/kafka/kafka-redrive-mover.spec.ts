import { Admin, Kafka } from 'kafkajs';
import { KafkajsScriptedCluster } from '../../../spec-support/kafkajs-scripted-cluster';
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

  // The copies go to topic 'orders', one partition, through kafkajs's own producer on a scripted broker.
  const orders = () => new KafkajsScriptedCluster('orders', [1]);

  it('answers NOT_CONFIRMED when the broker never confirms a copy, instead of waiting on the client (ops-console e2e hung 90 s)', async () => {
    const cluster = orders();
    cluster.stopAnswering();
    const outcomes = await mover(cluster.kafka(), 50).move(plan, copyOf, () => undefined);

    expect(outcomes.map((o) => o.status)).toEqual(['NOT_CONFIRMED', 'NOT_ATTEMPTED']);
    expect(outcomes[0].error).toMatch(/^AMBIGUOUS: no confirmation of the redriven copy within 50 ms/);
    // Nothing was confirmed: the redrive group's offset stays where it was, and the client starts afresh.
    expect(commitRedriveOffsets).not.toHaveBeenCalled();
    expect(cluster.disconnects).toBe(1);
  });

  it('moves every copy the broker confirms and commits past the last', async () => {
    const cluster = orders();
    const outcomes = await mover(cluster.kafka(), 1_000).move(plan, copyOf, () => undefined);

    expect(outcomes.map((o) => o.status)).toEqual(['REDRIVEN', 'REDRIVEN']);
    expect(cluster.produced.map((p) => p.partitions)).toEqual([[0], [0]]);
    expect(commitRedriveOffsets).toHaveBeenCalledWith(expect.anything(), SOURCE, [
      { partition: 0, offset: '2' },
    ]);
  });
});
