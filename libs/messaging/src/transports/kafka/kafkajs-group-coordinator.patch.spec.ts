import { Cluster, logLevel } from 'kafkajs';
import { GroupMembership } from './kafkajs-group-coordinator.patch';

type JoinRequest = { groupId: string; memberId?: string };

/** A cluster whose coordinator records the joins and answers them as `answer` says. */
function fakeCluster(answer: (request: JoinRequest) => Promise<unknown> = async (r) => r) {
  const joins: JoinRequest[] = [];
  const coordinator = {
    joinGroup: (request: JoinRequest) => {
      joins.push(request);
      return answer(request);
    },
  };
  const cluster = { findGroupCoordinator: async () => coordinator } as unknown as Cluster;
  return { cluster, joins };
}

/** Sets up a consumer's assigners on `cluster`, as kafkajs does, and joins once through it. */
async function join(membership: GroupMembership, cluster: Cluster, groupId = 'g', memberId = '') {
  const logger = { info: () => undefined } as never;
  membership.assigners().forEach((create) => create({ cluster, groupId, logger }));
  const coordinator = (await cluster.findGroupCoordinator({ groupId })) as unknown as {
    joinGroup(request: JoinRequest): Promise<unknown>;
  };
  return coordinator.joinGroup({ groupId, memberId });
}

describe(GroupMembership.name, () => {
  it('hands kafkajs its default assigner (round robin)', () => {
    const { cluster } = fakeCluster();
    const [create] = new GroupMembership('g').assigners();
    const assigner = create({ cluster, groupId: 'g', logger: { level: logLevel.NOTHING } as never });
    expect(assigner.name).toBe('RoundRobinAssigner');
  });

  it('joins as a new member until it has joined once', async () => {
    const { cluster, joins } = fakeCluster();
    await join(new GroupMembership('g'), cluster);
    expect(joins).toEqual([{ groupId: 'g', memberId: '' }]);
  });

  it('rejoins a restarted consumer (no member id) as the member it was', async () => {
    const membership = new GroupMembership('g');
    membership.joined('m-1');
    const { cluster, joins } = fakeCluster();
    await join(membership, cluster);
    expect(joins).toEqual([{ groupId: 'g', memberId: 'm-1' }]);
  });

  it('leaves a join that names its member alone', async () => {
    const membership = new GroupMembership('g');
    membership.joined('m-1');
    const { cluster, joins } = fakeCluster();
    await join(membership, cluster, 'g', 'm-2');
    expect(joins).toEqual([{ groupId: 'g', memberId: 'm-2' }]);
  });

  it('joins as a new member when the coordinator no longer knows the old one', async () => {
    const membership = new GroupMembership('g');
    membership.joined('m-1');
    const { cluster, joins } = fakeCluster(async (request) => {
      if (request.memberId === 'm-1')
        throw Object.assign(new Error('unknown member'), { type: 'UNKNOWN_MEMBER_ID' });
      return request;
    });
    await expect(join(membership, cluster)).resolves.toEqual({ groupId: 'g', memberId: '' });
    expect(joins.map((j) => j.memberId)).toEqual(['m-1', '']);
    expect(membership.currentMemberId).toBeUndefined();
  });

  it('passes other failures on and keeps the member for the next attempt', async () => {
    const membership = new GroupMembership('g');
    membership.joined('m-1');
    const loading = Object.assign(new Error('coordinator loading'), { type: 'COORDINATOR_LOAD_IN_PROGRESS' });
    const { cluster } = fakeCluster(async () => Promise.reject(loading));
    await expect(join(membership, cluster)).rejects.toBe(loading);
    expect(membership.currentMemberId).toBe('m-1');
  });

  it('joins as a new member after leaving on purpose', async () => {
    const membership = new GroupMembership('g');
    membership.joined('m-1');
    membership.left();
    const { cluster, joins } = fakeCluster();
    await join(membership, cluster);
    expect(joins).toEqual([{ groupId: 'g', memberId: '' }]);
  });

  it("only touches its own group's joins", async () => {
    const membership = new GroupMembership('g');
    membership.joined('m-1');
    const { cluster, joins } = fakeCluster();
    membership.assigners().forEach((create) => create({ cluster, groupId: 'g', logger: {} as never }));
    const other = (await cluster.findGroupCoordinator({ groupId: 'other' })) as unknown as {
      joinGroup(request: JoinRequest): Promise<unknown>;
    };
    await other.joinGroup({ groupId: 'other', memberId: '' });
    expect(joins).toEqual([{ groupId: 'other', memberId: '' }]);
  });
});
