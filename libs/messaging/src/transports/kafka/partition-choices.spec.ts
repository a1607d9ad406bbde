import { Message, Partitioners, RecordMetadata } from 'kafkajs';
import { PartitionChoices } from './partition-choices';

const partitionMetadata = [0, 1, 2].map((partitionId) => ({
  partitionId,
  leader: 1,
  partitionErrorCode: 0,
  replicas: [1],
  isr: [1],
}));

const answer = (partition: number, errorCode = 0): RecordMetadata => ({
  topicName: 't',
  partition,
  errorCode,
});

/** Runs the recording partitioner over `messages` once per attempt. */
function place(choices: PartitionChoices, messages: Message[], attempts = 1): number[] {
  const choose = choices.partitioner(Partitioners.DefaultPartitioner)();
  let placed: number[] = [];
  for (let i = 0; i < attempts; i++)
    placed = messages.map((message) => choose({ topic: 't', partitionMetadata, message }));
  return placed;
}

describe(PartitionChoices.name, () => {
  describe('unconfirmed', () => {
    it('is undefined when every message’s partition was answered without error', () => {
      const choices = new PartitionChoices();
      const messages = [
        { key: 'a', value: '1' },
        { key: 'b', value: '2' },
      ];
      const placed = place(choices, messages, 2);
      expect(
        choices.unconfirmed(
          't',
          messages,
          placed.map((p) => answer(p)),
        ),
      ).toBeUndefined();
    });

    it('names the partitions no answer covers', () => {
      const choices = new PartitionChoices();
      const messages = [{ key: 'a', value: '1' }];
      const [partition] = place(choices, messages);
      const other = (partition + 1) % 3;
      expect(choices.unconfirmed('t', messages, [answer(other)])).toMatch(
        new RegExp(`no broker answered for partition\\(s\\) ${partition}`),
      );
      expect(choices.unconfirmed('t', messages, [answer(partition, 6)])).toBeDefined();
      expect(choices.unconfirmed('u', messages, [{ ...answer(partition), topicName: 'x' }])).toBeDefined();
    });

    it('counts a message placed in different partitions by different attempts (no key) as unconfirmed', () => {
      const choices = new PartitionChoices();
      const messages = [{ key: null, value: '1' }];
      place(choices, messages, 3);
      const everything = [0, 1, 2].map((p) => answer(p));
      expect(choices.unconfirmed('t', messages, everything)).toMatch(
        /1 message\(s\) placed in no one partition/,
      );
    });

    it('counts a message the partitioner never saw as unconfirmed', () => {
      const choices = new PartitionChoices();
      expect(choices.unconfirmed('t', [{ key: 'a', value: '1' }], [answer(0)])).toBeDefined();
    });
  });
});
