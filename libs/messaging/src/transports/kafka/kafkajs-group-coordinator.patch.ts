import { Cluster, PartitionAssigner, PartitionAssigners } from 'kafkajs';

/** The part of kafkajs's coordinator (a broker connection) a join goes through. */
interface GroupCoordinator {
  joinGroup(request: { groupId: string; memberId?: string }): Promise<unknown>;
}

/**
 * Keeps a subscriber's consumer the same member of its group across a lost connection.
 *
 * When kafkajs loses its broker for longer than its retries (a broker restart), it restarts the consumer,
 * and the restarted consumer joins the group as a new member. The group coordinator still knows the old
 * member (it reloads the group's members with the group after its own restart) and, before it hands the
 * partitions out again, waits for that member to rejoin, up to the rebalance timeout (60 s), or for its
 * session to expire: no delivery meanwhile. kafkajs has no static membership and forgets its member id
 * when it restarts, so this remembers it and rejoins with it: the coordinator sees its member back and
 * completes the rebalance at once. If the coordinator no longer knows that member (its session expired,
 * or it left), the join is made again as a new member.
 *
 * kafkajs hands each partition assigner the consumer's own cluster: the assigner given here is kafkajs's
 * default (round robin), and the join of that consumer's group goes through the member id it remembers.
 */
export class GroupMembership {
  private memberId?: string;
  private readonly hooked = new WeakSet<object>();

  constructor(private readonly groupId: string) {}

  /** The member id the consumer joined with last (kafkajs's GROUP_JOIN event). */
  get currentMemberId(): string | undefined {
    return this.memberId;
  }

  /** Records the member the consumer joined as (call on GROUP_JOIN). */
  joined(memberId: string): void {
    this.memberId = memberId;
  }

  /** The consumer left the group on purpose: the next join is a new member's. */
  left(): void {
    this.memberId = undefined;
  }

  /** The `partitionAssigners` of a kafkajs consumer of this group. */
  assigners(): PartitionAssigner[] {
    return [
      (config) => {
        this.hook(config.cluster);
        return PartitionAssigners.roundRobin(config);
      },
    ];
  }

  private hook(cluster: Cluster): void {
    if (this.hooked.has(cluster)) return;
    this.hooked.add(cluster);
    const find = cluster.findGroupCoordinator.bind(cluster);
    cluster.findGroupCoordinator = async (group) => {
      const coordinator = await find(group);
      if (group.groupId === this.groupId) this.rejoinThrough(coordinator as unknown as GroupCoordinator);
      return coordinator;
    };
  }

  /** Makes a join without a member id (a restarted consumer's) rejoin as the remembered member. */
  private rejoinThrough(coordinator: GroupCoordinator): void {
    if (this.hooked.has(coordinator)) return;
    this.hooked.add(coordinator);
    const join = coordinator.joinGroup.bind(coordinator);
    coordinator.joinGroup = async (request) => {
      const previous = this.memberId;
      if (request.groupId !== this.groupId || request.memberId || previous === undefined)
        return join(request);
      try {
        return await join({ ...request, memberId: previous });
      } catch (error) {
        if (!isUnknownMember(error)) throw error;
        if (this.memberId === previous) this.memberId = undefined;
        return join(request);
      }
    };
  }
}

function isUnknownMember(error: unknown): boolean {
  return (error as { type?: unknown } | null)?.type === 'UNKNOWN_MEMBER_ID';
}
