import { SeekEntry } from 'kafkajs';
import { RedriveCluster } from './kafkajs-cluster.patch';
import { redriveGroupOf } from './partition-ranges';

/**
 * Commits `offsets` of `topic` for its redrive group (`<topic>.redrive`) without joining the group: one
 * OffsetCommit to the group's coordinator with no generation and no member, as the Java admin's
 * `alterConsumerGroupOffsets` does. The broker takes it only while the group has no members, and applies
 * the partitions of one request together. kafkajs's `admin.setOffsets` instead runs a consumer in the group
 * (join, sync, a fetch that waits out its 5 s, leave), and waits for that fetch without a deadline.
 */
export async function commitRedriveOffsets(
  cluster: RedriveCluster,
  topic: string,
  offsets: readonly SeekEntry[],
): Promise<void> {
  const groupId = redriveGroupOf(topic);
  const coordinator = await cluster.findGroupCoordinator({ groupId });
  await coordinator.offsetCommit({
    groupId,
    groupGenerationId: -1,
    memberId: '',
    topics: [{ topic, partitions: offsets.map(({ partition, offset }) => ({ partition, offset })) }],
  });
}
