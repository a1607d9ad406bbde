/**
 * The kafkajs internals the library leans on, checked against the installed kafkajs: `GroupMembership`
 * replaces `Cluster.findGroupCoordinator` and the coordinator's `joinGroup` (a restarted consumer rejoins as
 * the member it was), and `KafkaSubscriber` replaces a consumer whose coordinator went silent because kafkajs
 * keeps the coordinator it found at join time. If an upgrade of kafkajs changes any of this, this spec fails
 * and says which assumption broke: revisit `kafkajs-group-coordinator.patch.ts` and `kafka-subscriber.ts` before upgrading.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Kafka, logLevel, PartitionAssigner } from 'kafkajs';
import { quietLogger } from '../../../spec-support/kafkajs-scripted-cluster';
import { GroupMembership } from './kafkajs-group-coordinator.patch';

type JoinRequest = { groupId: string; memberId?: string };
type Coordinator = { joinGroup(request: JoinRequest): Promise<unknown> };
type InternalCluster = {
  findGroupCoordinator(group: { groupId: string }): Promise<Coordinator>;
  findGroupCoordinatorMetadata(group: { groupId: string }): Promise<{ coordinator: { nodeId: number } }>;
  findBroker(broker: { nodeId: number }): Promise<unknown>;
};

const kafkajsDir = path.dirname(require.resolve('kafkajs/package.json'));
const kafkajsSource = (file: string) => readFileSync(path.join(kafkajsDir, 'src', file), 'utf8');
/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs's internals have no typed entry point */
const ConsumerGroup = require(path.join(kafkajsDir, 'src/consumer/consumerGroup.js')) as new (
  options: Record<string, unknown>,
) => Record<symbol, () => Promise<void>> & { memberId: string | null };
const Broker = require(path.join(kafkajsDir, 'src/broker/index.js')) as {
  prototype: Record<string, unknown>;
};
const Cluster = require(path.join(kafkajsDir, 'src/cluster/index.js')) as {
  prototype: Record<string, unknown>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** A kafkajs consumer created with the membership's assigners; the cluster kafkajs handed them. */
function consumerCluster(membership: GroupMembership): InternalCluster {
  let cluster: InternalCluster | undefined;
  const capture: PartitionAssigner[] = membership.assigners().map((create) => (config) => {
    cluster = config.cluster as unknown as InternalCluster;
    return create(config);
  });
  new Kafka({ clientId: 'contract', brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING }).consumer({
    groupId: 'g',
    partitionAssigners: capture,
  });
  if (!cluster)
    throw new Error('kafkajs no longer hands partition assigners the cluster when a consumer is made');
  return cluster;
}

describe('kafkajs internals the library relies on', () => {
  it('is the kafkajs line the patch was written against (2.2)', () => {
    const { version } = JSON.parse(readFileSync(path.join(kafkajsDir, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version).toMatch(/^2\.2\./);
  });

  it("hands each partition assigner the consumer's own cluster, whose coordinator lookup can be replaced", async () => {
    const membership = new GroupMembership('g');
    membership.joined('m-1');
    const cluster = consumerCluster(membership);
    const joins: JoinRequest[] = [];
    const coordinator: Coordinator = { joinGroup: async (request) => joins.push(request) };
    // kafkajs's own findGroupCoordinator: metadata first, then the broker by node id.
    cluster.findGroupCoordinatorMetadata = async () => ({ coordinator: { nodeId: 7 } });
    cluster.findBroker = async ({ nodeId }) => (nodeId === 7 ? coordinator : undefined);
    const found = await cluster.findGroupCoordinator({ groupId: 'g' });
    await found.joinGroup({ groupId: 'g', memberId: '' });
    expect(found).toBe(coordinator);
    expect(joins).toEqual([{ groupId: 'g', memberId: 'm-1' }]);
  });

  it("joins through cluster.findGroupCoordinator and the coordinator's joinGroup, without a member id after a restart", async () => {
    const requests: JoinRequest[] = [];
    const cluster = {
      findGroupCoordinator: async () => ({
        joinGroup: async (request: JoinRequest) => {
          requests.push(request);
          return {
            generationId: 1,
            leaderId: 'm-1',
            memberId: 'm-1',
            members: [],
            groupProtocol: 'RoundRobinAssigner',
          };
        },
      }),
    };
    const group = new ConsumerGroup({
      logger: quietLogger(),
      topics: ['t'],
      topicConfigurations: {},
      cluster,
      groupId: 'g',
      assigners: [],
      sessionTimeout: 30_000,
      rebalanceTimeout: 60_000,
      instrumentationEmitter: { emit: () => undefined },
    });
    const join = Object.getOwnPropertySymbols(Object.getPrototypeOf(group)).find(
      (symbol) => symbol.description === 'private:ConsumerGroup:join',
    );
    expect(join).toBeDefined();
    await group[join as symbol]();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ groupId: 'g', memberId: '' });
    expect(group.memberId).toBe('m-1');
  });

  it('keeps the coordinator it found at join time for heartbeats and commits (why a silent one is replaced)', () => {
    const consumerGroup = kafkajsSource('consumer/consumerGroup.js');
    expect(consumerGroup).toContain(
      'this.coordinator = await this.cluster.findGroupCoordinator({ groupId })',
    );
    expect(consumerGroup).toContain('await this.coordinator.heartbeat(payload)');
    const offsetManager = kafkajsSource('consumer/offsetManager/index.js');
    expect(offsetManager).toContain('this.coordinator = await this.cluster.findBroker(this.coordinator)');
  });

  it('fetches on with the old membership when a rejoin fails with a retriable error other than a rebalance', () => {
    // The join bails with the broker's error as it is (COORDINATOR_LOAD_IN_PROGRESS stays retriable), after
    // `this.coordinator` already names the new coordinator; the runner retries, which starts the fetchers
    // again. The commits' coordinator is the OffsetManager's, made at the last completed join (SYNC).
    const consumerGroup = kafkajsSource('consumer/consumerGroup.js');
    expect(consumerGroup).toMatch(/if \(e\.type === 'UNKNOWN_MEMBER_ID'\) \{[^}]*\}\s+bail\(e\)/);
    expect(consumerGroup).toMatch(/this\.offsetManager = new OffsetManager\(\{[\s\S]*?\n\s+coordinator,\n/);
    expect(kafkajsSource('retry/index.js')).toMatch(
      /const bail = error => \{\s+aborted = true\s+reject\(error/,
    );
    const runner = kafkajsSource('consumer/runner.js');
    expect(runner).toMatch(
      /await this\.fetchManager\.start\(\)[\s\S]*?await this\.consumerGroup\.joinAndSync\(\)\s+return/,
    );
  });

  it('never commits on its own with autoCommit off (the subscriber resolves offsets ahead of its commits)', () => {
    const runner = kafkajsSource('consumer/runner.js');
    // Two behind `if (this.autoCommit)`, one in eachBatch's commitOffsetsIfNecessary (the library never calls it).
    const autoCommits = runner.match(/this\.consumerGroup\.commitOffsets(IfNecessary)?\(\)/g) ?? [];
    expect(autoCommits).toHaveLength(3);
    expect(runner).toMatch(
      /autoCommitOffsets\(\) \{\s+if \(this\.autoCommit\) \{\s+return this\.consumerGroup\.commitOffsets\(\)/,
    );
    expect(runner).toMatch(
      /autoCommitOffsetsIfNecessary\(\) \{\s+if \(this\.autoCommit\) \{\s+return this\.consumerGroup\.commitOffsetsIfNecessary\(\)/,
    );
  });

  it('has the broker and cluster methods the patch and the subscriber call', () => {
    expect(typeof Cluster.prototype.findGroupCoordinator).toBe('function');
    expect(typeof Cluster.prototype.findBroker).toBe('function');
    for (const method of ['joinGroup', 'heartbeat', 'offsetCommit']) {
      expect(typeof Broker.prototype[method]).toBe('function');
    }
  });
});
