import { ICustomPartitioner, Message, RecordMetadata } from 'kafkajs';

/**
 * The partitions a kafkajs producer's partitioner chose for each message it was given, so that a send kafkajs
 * resolved can be checked against what the brokers answered.
 *
 * Why (kafkajs 2.2, `producer/sendMessages.js`): the attempts of one send share the answers of the brokers
 * that answered, and a retry sends only to the leaders without one, grouping the partitions by the leaders
 * the refreshed metadata names. When a partition's leader moves between two attempts (its old leader failed
 * or was fenced) to a broker that answered the first attempt for other partitions, the partition is sent to
 * nobody and the send still resolves: its messages are confirmed and were never written. A message placed in
 * different partitions by different attempts (no key, the partition count changed) is no better known.
 */
export class PartitionChoices {
  private readonly chosen = new WeakMap<Message, Set<number>>();

  /** `inner` (e.g. `Partitioners.DefaultPartitioner`), noting every choice it makes. */
  partitioner(inner: ICustomPartitioner): ICustomPartitioner {
    return () => {
      const choose = inner();
      return (args) => {
        const partition = choose(args);
        const seen = this.chosen.get(args.message) ?? new Set<number>();
        this.chosen.set(args.message, seen.add(Number(partition)));
        return partition;
      };
    };
  }

  /**
   * What the answers of a resolved send of `messages` (the very objects given to `send`) to `topic` leave
   * unconfirmed, said in a sentence; undefined when every message's one partition was answered without error.
   */
  unconfirmed(
    topic: string,
    messages: readonly Message[],
    answers: readonly RecordMetadata[],
  ): string | undefined {
    const answered = new Set(
      answers.filter((a) => a.topicName === topic && a.errorCode === 0).map((a) => Number(a.partition)),
    );
    const moved = messages.filter((m) => (this.chosen.get(m)?.size ?? 0) !== 1).length;
    const unanswered = new Set<number>();
    for (const m of messages) {
      const [partition] = this.chosen.get(m) ?? [];
      if (partition !== undefined && !answered.has(partition)) unanswered.add(partition);
    }
    if (moved === 0 && unanswered.size === 0) return undefined;
    const parts = [
      ...(unanswered.size > 0 ? [`no broker answered for partition(s) ${[...unanswered].join(', ')}`] : []),
      ...(moved > 0 ? [`${moved} message(s) placed in no one partition`] : []),
    ];
    return `kafkajs resolved the send to ${topic}, but ${parts.join(' and ')} (a leader moved during its retries)`;
  }
}
