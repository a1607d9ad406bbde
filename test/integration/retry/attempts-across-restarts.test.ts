import { RetryMode, RetryOrdering, RetryPolicyOptions } from 'nest-reliable-messaging';
import { eventually } from '../../harness/eventually';
import { uniqueName } from '../../harness/names';
import { FixtureProcess } from '../support/child-process';
import { useConsumerProcesses } from '../support/consumer-processes';
import { orderMessage } from '../support/raw-messages';
import { drainQueue } from '../support/rabbit-wire';
import { TopicReader } from '../support/topic-reader';
/** Long, fixed waits between attempts (the process draws the longest jitter): room to kill it in one. */
const SLOW = { initialDelayMs: 4_000, multiplier: 1, maxDelayMs: 4_000 };

const CASES: Array<[string, 'kafka' | 'rabbitmq', RetryPolicyOptions]> = [
  ['Kafka, PAUSE_PARTITION', 'kafka', { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, backoff: SLOW }],
  [
    'Kafka, INLINE',
    'kafka',
    { maxAttempts: 3, mode: RetryMode.INLINE, ordering: RetryOrdering.ALLOW_REORDER, backoff: SLOW },
  ],
  ['RabbitMQ, INLINE', 'rabbitmq', { maxAttempts: 3, mode: RetryMode.INLINE, backoff: SLOW }],
];

/** The attempts a consumer process logged for a message, in order. */
function attemptsOf(process: FixtureProcess, messageId: string): number[] {
  return [...process.log.matchAll(new RegExp(`^ATTEMPT ${messageId} (\\d+)$`, 'gm'))].map((m) =>
    Number(m[1]),
  );
}

/** maxAttempts holds across restarts: the count of a message retried in place is persisted, not kept in memory. */
describe.each(CASES)(
  'Attempts of a message retried in place survive a killed consumer (%s)',
  (_, transport, policy) => {
    const suite = useConsumerProcesses(`attempts_${transport}`);

    // claim: C-48
    it('runs the remaining attempts only, then dead-letters the message at maxAttempts', async () => {
      const destination = uniqueName(`attempts_${transport}`);
      const group = uniqueName('g');
      const env = {
        SCHEMA: suite.schema.name,
        DESTINATION: destination,
        GROUP: group,
        TRANSPORT: transport,
        POLICY: JSON.stringify(policy),
        ALWAYS_FAIL: '1',
        JITTER: 'max',
      };
      const message = orderMessage(destination, { customer: 'k', seq: 1 });
      const id = message.headers['msg.id'];
      await suite.destination(transport, destination, group, 1);
      const first = await suite.start(env);
      await suite.send(transport, [message]);
      // Two attempts failed (and are recorded); the third is 4 s away: kill the consumer now.
      const recorded = async () =>
        (
          await suite.schema.query<{ failed_attempts: number }>(
            'select failed_attempts from messaging_attempts where consumer_group = $1 and message_id = $2',
            [group, id],
          )
        )[0]?.failed_attempts;
      await eventually(async () => expect(await recorded()).toBe(2), 60_000);
      expect(attemptsOf(first, id)).toEqual([1, 2]);
      await first.kill();

      const second = await suite.start(env);
      const dlq = `${destination}.${group}.dlq`;
      let parkedAttempt: string;
      if (transport === 'kafka') {
        const reader = await new TopicReader(dlq).start();
        const [parked] = await reader.waitFor(1, 90_000);
        await reader.stop();
        parkedAttempt = parked.headers['msg.retry-attempt'];
      } else {
        const parked = await eventually(async () => {
          const got = await drainQueue(await suite.rabbit.connect(), dlq);
          expect(got).toHaveLength(1);
          return got[0];
        }, 60_000);
        parkedAttempt = String(parked.properties.headers?.['msg.retry-attempt']);
      }
      expect(attemptsOf(second, id)).toEqual([3]);
      expect(parkedAttempt).toBe('3');
    });
  },
);
