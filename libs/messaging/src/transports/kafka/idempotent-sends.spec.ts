import { CONFIRMED, PublishOutcome } from '../publish-outcome';
import { IdempotentSends } from './idempotent-sends';

/** A producer of the fake factory: its number, and whether it was closed. */
interface FakeProducer {
  readonly id: number;
  closed: boolean;
}

const AMBIGUOUS: PublishOutcome = { status: 'AMBIGUOUS', error: new Error('answer lost') };

/** A send the test finishes by hand, recording which producer it ran on. */
class ManualSend {
  producer?: FakeProducer;
  private finish?: (outcome: PublishOutcome) => void;

  readonly attempt = (producer: FakeProducer): Promise<PublishOutcome> => {
    this.producer = producer;
    return new Promise((resolve) => (this.finish = resolve));
  };

  get started(): boolean {
    return this.producer !== undefined;
  }

  end(outcome: PublishOutcome): void {
    (this.finish as (outcome: PublishOutcome) => void)(outcome);
  }
}

function sendsOverFakes(openFails = 0) {
  const producers: FakeProducer[] = [];
  let failures = openFails;
  const sends = new IdempotentSends<FakeProducer>({
    open: async () => {
      if (failures > 0) {
        failures -= 1;
        throw new Error('cannot connect');
      }
      const producer = { id: producers.length + 1, closed: false };
      producers.push(producer);
      return producer;
    },
    close: async (producer) => {
      producer.closed = true;
    },
    failure: (error) => ({ status: 'AMBIGUOUS', error: error as Error }),
  });
  return { sends, producers };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe(IdempotentSends.name, () => {
  describe('send', () => {
    it('runs the sends of one lane one at a time, in order; other lanes go beside them', async () => {
      const { sends } = sendsOverFakes();
      const [first, second, other] = [new ManualSend(), new ManualSend(), new ManualSend()];
      const done = [sends.send('t', first.attempt), sends.send('t', second.attempt)];
      const beside = sends.send('u', other.attempt);
      await settle();
      expect([first.started, second.started, other.started]).toEqual([true, false, true]);
      first.end(CONFIRMED);
      await settle();
      expect(second.started).toBe(true);
      second.end(CONFIRMED);
      other.end(CONFIRMED);
      expect(await Promise.all([...done, beside])).toEqual([CONFIRMED, CONFIRMED, CONFIRMED]);
    });

    it('starts a send queued behind a failed one on a new producer, and closes the old one', async () => {
      const { sends, producers } = sendsOverFakes();
      const [failed, queued] = [new ManualSend(), new ManualSend()];
      const done = [sends.send('t', failed.attempt), sends.send('t', queued.attempt)];
      await settle();
      failed.end(AMBIGUOUS);
      await settle();
      expect(queued.producer?.id).toBe(2);
      expect(producers[0].closed).toBe(true);
      queued.end(CONFIRMED);
      expect(await Promise.all(done)).toEqual([AMBIGUOUS, CONFIRMED]);
    });

    it('replaces the producer after a refusal too (no later send uses a failed send’s producer id)', async () => {
      const { sends } = sendsOverFakes();
      const refused: PublishOutcome = { status: 'REJECTED', error: new Error('too large') };
      await sends.send('t', async () => refused);
      const next = new ManualSend();
      const done = sends.send('t', next.attempt);
      await settle();
      expect(next.producer?.id).toBe(2);
      next.end(CONFIRMED);
      await done;
    });

    it('closes a failed send’s producer only once the other lanes’ sends on it ended', async () => {
      const { sends, producers } = sendsOverFakes();
      const [failed, beside, later] = [new ManualSend(), new ManualSend(), new ManualSend()];
      const done = [sends.send('t', failed.attempt), sends.send('u', beside.attempt)];
      await settle();
      failed.end(AMBIGUOUS);
      await settle();
      expect(producers[0].closed).toBe(false); // `u` still sends on it
      const afterwards = sends.send('u', later.attempt);
      beside.end(CONFIRMED);
      await settle();
      expect(producers[0].closed).toBe(true);
      expect(later.producer?.id).toBe(2);
      later.end(CONFIRMED);
      await Promise.all([...done, afterwards]);
    });

    it('does not start a send whose caller stopped waiting; answers it AMBIGUOUS at once', async () => {
      const { sends } = sendsOverFakes();
      const [inFlight, abandoned] = [new ManualSend(), new ManualSend()];
      const first = sends.send('t', inFlight.attempt);
      const caller = new AbortController();
      const second = sends.send('t', abandoned.attempt, caller.signal);
      await settle();
      caller.abort();
      inFlight.end(CONFIRMED);
      const outcome = await second;
      expect(outcome.status).toBe('AMBIGUOUS');
      expect(outcome.status !== 'CONFIRMED' && outcome.error.message).toMatch(/not sent/);
      expect(abandoned.started).toBe(false);
      await first;
    });

    it('replaces the producer after a send whose caller gave up while it was on the wire, whatever the answer', async () => {
      const { sends, producers } = sendsOverFakes();
      const inFlight = new ManualSend();
      const caller = new AbortController();
      const done = sends.send('t', inFlight.attempt, caller.signal);
      await settle();
      caller.abort();
      inFlight.end(CONFIRMED);
      expect(await done).toEqual(CONFIRMED);
      const next = new ManualSend();
      const after = sends.send('t', next.attempt);
      await settle();
      expect(next.producer?.id).toBe(2);
      expect(producers[0].closed).toBe(true);
      next.end(CONFIRMED);
      await after;
    });

    it('answers a send whose producer could not be opened with the failure, and opens one again next time', async () => {
      const { sends } = sendsOverFakes(1);
      const outcome = await sends.send('t', async () => CONFIRMED);
      expect(outcome.status !== 'CONFIRMED' && outcome.error.message).toBe('cannot connect');
      expect(await sends.send('t', async () => CONFIRMED)).toEqual(CONFIRMED);
    });
  });

  describe('close', () => {
    it('waits for the sends under way, then closes every producer', async () => {
      const { sends, producers } = sendsOverFakes();
      const inFlight = new ManualSend();
      const done = sends.send('t', inFlight.attempt);
      await settle();
      const closing = sends.close();
      await settle();
      expect(producers[0].closed).toBe(false);
      inFlight.end(CONFIRMED);
      await closing;
      expect(producers[0].closed).toBe(true);
      await done;
    });
  });
});
