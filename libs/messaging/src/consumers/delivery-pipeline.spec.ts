import { Logger } from '@nestjs/common';
import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { RetryPolicyOptions, RetryMode, RetryOrdering } from '../retry/retry-policy.interface';
import { Settlement } from '../transports/delivery-contract';
import { TransportCapabilities } from '../retry/transport-capabilities';
import { DeliveryPipeline } from './delivery-pipeline';
import { MAX_CONNECTION_LOSSES } from './run-state';
import { MessageContext } from './message-context';
import { useQuietWarnings } from '../../spec-support/quiet-warnings';
import {
  DESTINATION,
  FakeInbox,
  FakeManager,
  Flaky,
  GROUP,
  Harness,
  idOf,
  KAFKA,
  orderWire,
  RABBITMQ,
  uniqueViolation,
} from '../../spec-support/pipeline-harness';

const FAST = { initialDelayMs: 1_000, multiplier: 2, maxDelayMs: 8_000 };
const ACK = { kind: 'ACK' };
const orders = (n: number) =>
  Array.from({ length: n }, (_, i) => orderWire({ orderId: i + 1, customer: 'c1' }));
const ids = (wires: readonly WireMessage[]) => wires.map(idOf);

describe(DeliveryPipeline.name, () => {
  useQuietWarnings();

  describe('handle', () => {
    it('runs the handler once and answers ACK', async () => {
      const harness = new Harness();
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'ACK' });
      expect(harness.calls.map((c) => c.attempt)).toEqual([1]);
      expect(harness.copies).toEqual([]);
    });

    it("names the message's dead-letter destination in the failure's log line", async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      try {
        const harness = new Harness();
        const wire = orderWire();
        harness.onCall = () => {
          throw new Flaky('downstream flaked');
        };
        await harness.handle(wire);
        expect(warn).toHaveBeenCalledWith(
          expect.stringContaining(`dead-lettered (NO_POLICY) to ${DESTINATION}.${GROUP}.dlq`),
        );
      } finally {
        warn.mockRestore();
      }
    });
  });

  describe("a handler's connection that breaks under it", () => {
    it('is the database away, not the handler failing: the delivery waits and spends no attempt', async () => {
      const inbox = new FakeInbox();
      const harness = new Harness({ inbox }); // no retry policy: a handler's own failure is dead-lettered
      let calls = 0;
      harness.onCall = () => {
        if ((calls += 1) > 2) return;
        inbox.rollbackAnswers.push('BROKEN');
        throw new Error('Connection terminated unexpectedly');
      };
      await expect(harness.withTimePassing(harness.handle(orderWire()))).resolves.toEqual(ACK);
      expect(harness.calls.map((c) => c.attempt)).toEqual([1, 1, 1]);
      expect(harness.copies).toEqual([]);
      expect(inbox.applied).toHaveLength(1);
    });

    it(`fails like any handler once it broke ${MAX_CONNECTION_LOSSES + 1} times for one delivery`, async () => {
      const inbox = new FakeInbox();
      const harness = new Harness({ inbox });
      harness.onCall = () => {
        inbox.rollbackAnswers.push('BROKEN'); // e.g. held past idle_in_transaction_session_timeout
        throw new Error('terminating connection due to idle-in-transaction timeout');
      };
      const wire = orderWire();
      await harness.withTimePassing(harness.handle(wire));
      expect(harness.calls).toHaveLength(MAX_CONNECTION_LOSSES + 1);
      expect(harness.copies.map(idOf)).toEqual([idOf(wire)]); // dead-lettered (no policy)
      expect(inbox.applied).toEqual([]);
    });

    it('is still a failure when the rollback was sent: the connection was fine', async () => {
      const harness = new Harness();
      harness.onCall = () => {
        throw new Error('Connection terminated unexpectedly'); // another connection's error, say
      };
      const wire = orderWire();
      await harness.handle(wire);
      expect(harness.calls).toHaveLength(1);
      expect(harness.copies.map(idOf)).toEqual([idOf(wire)]);
    });
  });

  describe('handleBatch', () => {
    const orderIds = (calls: readonly MessageContext[]) => calls.map((c) => `${c.messageId}@${c.attempt}`);
    /** The transaction a handler call ran in. */
    const batchOf = (call: MessageContext) => (call.manager as unknown as FakeManager).batch;

    /** A harness whose handler fails the second of `wires` on its first attempt (retried inline). */
    const secondFailsOnce = (inbox: FakeInbox, wires: readonly WireMessage[], batchSize?: number) => {
      const harness = new Harness({
        inbox,
        batchSize,
        policy: {
          maxAttempts: 3,
          mode: RetryMode.INLINE,
          ordering: RetryOrdering.ALLOW_REORDER,
          backoff: FAST,
        },
      });
      const failing = wires[1].headers[MessageHeaders.ID];
      harness.onCall = (context) => {
        if (context.messageId === failing && context.attempt === 1) throw new Flaky('downstream flaked');
      };
      return { harness, failing };
    };

    it('runs consecutive deliveries in one transaction and answers ACK once it committed', async () => {
      const inbox = new FakeInbox();
      const harness = new Harness({ inbox });
      const wires = orders(3);
      await expect(harness.handleBatch(wires)).resolves.toEqual([ACK, ACK, ACK]);
      expect(inbox.commits).toBe(1);
      expect(new Set(harness.calls.map(batchOf)).size).toBe(1);
      expect([...inbox.handled]).toEqual(ids(wires));
    });

    it('rolls the batch back at a failing delivery, commits the ones before it again alone, retries it alone, then goes on', async () => {
      const inbox = new FakeInbox();
      const wires = orders(4);
      const { harness, failing } = secondFailsOnce(inbox, wires);
      const settled = await harness.withTimePassing(harness.handleBatch(wires));

      expect(settled).toEqual([ACK, ACK, ACK, ACK]);
      const [first, second, firstAgain, retried, third, fourth] = harness.calls;
      expect(orderIds(harness.calls)).toEqual([
        `${ids(wires)[0]}@1`,
        `${failing}@1`,
        `${ids(wires)[0]}@1`,
        `${failing}@2`,
        `${ids(wires)[2]}@1`,
        `${ids(wires)[3]}@1`,
      ]);
      // The first batch rolled back whole; the first delivery again in a transaction of its own; the retry
      // alone; the rest in a batch of their own.
      expect(batchOf(first)).toBe(batchOf(second));
      expect(batchOf(firstAgain)).not.toBe(batchOf(first));
      expect(batchOf(retried)).not.toBe(batchOf(firstAgain));
      expect(batchOf(third)).toBe(batchOf(fourth));
      expect(batchOf(third)).not.toBe(batchOf(retried));
      expect(inbox.batches.map((b) => b.length)).toEqual([4, 1, 1, 2]);
      expect(inbox.rollbacks).toBe(1);
      expect(inbox.commits).toBe(3);
      // Each applied once, in order.
      expect(inbox.applied).toEqual(ids(wires));
    });

    it('with batchSize 1, handles each delivery in a transaction of its own: a failure runs no other handler again', async () => {
      const inbox = new FakeInbox();
      const wires = orders(3);
      const { harness, failing } = secondFailsOnce(inbox, wires, 1);
      await expect(harness.withTimePassing(harness.handleBatch(wires))).resolves.toEqual([ACK, ACK, ACK]);
      expect(orderIds(harness.calls)).toEqual([
        `${ids(wires)[0]}@1`,
        `${failing}@1`,
        `${failing}@2`,
        `${ids(wires)[2]}@1`,
      ]);
      // The failing one's retry is a transaction of its own too.
      expect(inbox.batches).toEqual([[ids(wires)[0]], [failing], [failing], [ids(wires)[2]]]);
      expect(inbox.applied).toEqual(ids(wires));
    });

    it('splits a lane into batches of consumers.batchSize', async () => {
      const inbox = new FakeInbox();
      const harness = new Harness({ inbox, batchSize: 2 });
      const wires = orders(5);
      await harness.handleBatch(wires);
      expect(inbox.batches.map((b) => b.length)).toEqual([2, 2, 1]);
      expect(inbox.commits).toBe(3);
    });

    // claim: C-39
    it('records a batch in the inbox once, before its handlers: one batch of distinct messages', async () => {
      const inbox = new FakeInbox();
      const harness = new Harness({ inbox });
      const wires = orders(3);
      await harness.handleBatch(wires);
      expect(inbox.batches).toEqual([ids(wires)]);
    });

    it('takes the same message twice in a lane into the next batch, where it is a duplicate', async () => {
      const inbox = new FakeInbox();
      const harness = new Harness({ inbox });
      const [a, b] = orders(2);
      await expect(harness.handleBatch([a, b, a])).resolves.toEqual([ACK, ACK, ACK]);
      expect(inbox.batches).toEqual([ids([a, b]), ids([a])]);
      expect(harness.calls).toHaveLength(2);
      expect(inbox.applied).toEqual(ids([a, b]));
    });

    it('handles each delivery again alone when the batch does not commit, and answers ACK only then', async () => {
      const inbox = new FakeInbox();
      inbox.failCommits = 1;
      const harness = new Harness({ inbox });
      const wires = orders(3);
      await expect(harness.handleBatch(wires)).resolves.toEqual([ACK, ACK, ACK]);
      // Three tries in the lost batch, three again alone (each in a transaction of its own).
      expect(harness.calls).toHaveLength(6);
      expect(inbox.batches.map((b) => b.length)).toEqual([3, 1, 1, 1]);
      expect(inbox.applied).toEqual(ids(wires));
    });

    it('waits for the database when the batch cannot begin, then runs the batch, spending no attempt', async () => {
      const inbox = new FakeInbox();
      inbox.failBegins = 6;
      const harness = new Harness({ inbox, policy: { maxAttempts: 1, mode: RetryMode.INLINE } });
      const wires = orders(3);
      const settled = harness.handleBatch(wires);
      await harness.clock.advance(0);
      expect(inbox.beginAnswers).toHaveLength(5); // one begin failed: 250 ms × 0.75 (random() is 0.5) to wait
      await harness.clock.advance(187);
      expect(inbox.beginAnswers).toHaveLength(5);
      await expect(harness.withTimePassing(settled)).resolves.toEqual([ACK, ACK, ACK]);
      expect(inbox.batches.map((b) => b.length)).toEqual([3]);
      expect(harness.calls.map((c) => c.attempt)).toEqual([1, 1, 1]);
      expect(inbox.applied).toEqual(ids(wires));
      expect(harness.copies).toEqual([]);
    });

    it("waits for the database when a handler's connection breaks under it, spending no attempt", async () => {
      const inbox = new FakeInbox();
      const wires = orders(3);
      const harness = new Harness({ inbox }); // no retry policy: a handler's own failure is dead-lettered
      let broken = false;
      harness.onCall = (context) => {
        if (context.messageId === idOf(wires[1]) && !broken) {
          broken = true;
          inbox.rollbackAnswers.push('BROKEN'); // the database went away under the transaction
          throw new Error('Connection terminated unexpectedly');
        }
      };
      await expect(harness.withTimePassing(harness.handleBatch(wires))).resolves.toEqual([ACK, ACK, ACK]);
      expect(harness.copies).toEqual([]);
      expect(harness.calls.map((c) => c.attempt)).toEqual([1, 1, 1, 1, 1]);
      // As after a failure: the one before goes again alone, then the one whose connection broke, then the rest.
      expect(inbox.batches.map((b) => b.length)).toEqual([3, 1, 1, 1]);
      expect(inbox.applied).toEqual(ids(wires));
    });

    it('leaves the batch unsettled when the consumer stops while it waits for the database', async () => {
      const inbox = new FakeInbox();
      inbox.failBegins = 100;
      const harness = new Harness({ inbox });
      const settled = harness.handleBatch(orders(2));
      await harness.clock.advance(2_000);
      harness.stopping = true;
      await expect(harness.withTimePassing(settled)).resolves.toEqual([{ kind: 'LEAVE' }, { kind: 'LEAVE' }]);
      expect(harness.calls).toEqual([]);
    });

    it('leaves the deliveries after a PAUSE unsettled (Kafka: they come again after the rewind)', async () => {
      const inbox = new FakeInbox();
      const wires = orders(3);
      const harness = new Harness({
        inbox,
        policy: { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, backoff: FAST },
      });
      harness.onCall = (context) => {
        if (context.messageId === wires[1].headers[MessageHeaders.ID]) throw new Flaky('downstream flaked');
      };
      const settled = await harness.handleBatch(wires);
      expect(settled.map((s) => s.kind)).toEqual(['ACK', 'PAUSE', 'LEAVE']);
      expect([...inbox.handled]).toEqual([ids(wires)[0]]);
    });
  });

  describe('how often a handler runs', () => {
    const INLINE: RetryPolicyOptions = {
      maxAttempts: 6,
      mode: RetryMode.INLINE,
      ordering: RetryOrdering.ALLOW_REORDER,
      backoff: FAST,
    };
    /** Calls of each message, in the order of `wires`. */
    const callCounts = (harness: Harness, wires: readonly WireMessage[]) =>
      wires.map((w) => harness.callsOf(idOf(w)).length);
    /** Fails message `id` on its calls numbered in `failOn` (1-based), counting calls per message. */
    const failOnCalls = (harness: Harness, failOn: ReadonlyMap<string, readonly number[]>) => {
      harness.onCall = (context) => {
        const call = harness.callsOf(context.messageId).length;
        if (failOn.get(context.messageId)?.includes(call)) throw new Flaky('downstream flaked');
      };
    };

    it.each([0, 1, 2, 3, 4, 5])(
      'a failure at position %i of a batch of six: twice for each before it (again alone), once for each after it',
      async (position) => {
        const wires = orders(6);
        const harness = new Harness();
        failOnCalls(harness, new Map([[idOf(wires[position]), [1, 2, 3]]]));
        const settled = await harness.handleBatch(wires);

        expect(settled.map((s) => s.kind)).toEqual(Array(6).fill('ACK'));
        expect(callCounts(harness, wires)).toEqual(wires.map((_, i) => (i < position ? 2 : 1)));
        expect(harness.copies.map(idOf)).toEqual([idOf(wires[position])]); // no policy: dead-lettered
        expect(harness.inbox.applied).toEqual(ids(wires).filter((_, i) => i !== position));
        // Each one before it went again in a transaction of its own.
        expect(harness.inbox.batches.slice(1, position + 1)).toEqual(
          ids(wires.slice(0, position)).map((id) => [id]),
        );
      },
    );

    it('never a third time because of neighbours, whichever fails when it runs again', async () => {
      // The last fails on its first call; each of the others but the first fails on a later call of its own,
      // the fourth on its 2nd, the third on its 3rd...: a rerun of the ones before a failure that failed
      // again used to rerun the ones before that one again: the first handler ran six times.
      const wires = orders(6);
      const harness = new Harness({ policy: INLINE });
      failOnCalls(
        harness,
        new Map(wires.map((w, i) => [idOf(w), i === 5 ? [1] : i === 0 ? [] : [6 - i]] as const)),
      );
      const settled = await harness.withTimePassing(harness.handleBatch(wires));

      expect(settled.map((s) => s.kind)).toEqual(Array(6).fill('ACK'));
      expect(harness.callsOf(idOf(wires[0]))).toHaveLength(2);
      for (const wire of wires) {
        const id = idOf(wire);
        const own = harness.inbox.ownFailures.get(id) ?? 0;
        expect(harness.callsOf(id).length - own).toBeLessThanOrEqual(2);
        expect(harness.inbox.neighbourRollbacks.get(id) ?? 0).toBeLessThanOrEqual(1);
      }
      expect(harness.inbox.applied).toEqual(ids(wires));
    });

    it('fails the delivery whose handler swallowed a database error that ended the transaction; the others go again alone', async () => {
      const wires = orders(4);
      const harness = new Harness();
      harness.onCall = (context) => {
        if (context.messageId === idOf(wires[2]))
          (context.manager as unknown as FakeManager).swallow(uniqueViolation());
      };
      const settled = await harness.handleBatch(wires);

      expect(settled.map((s) => s.kind)).toEqual(['ACK', 'ACK', 'ACK', 'ACK']);
      expect(harness.inbox.applied).toEqual(ids([wires[0], wires[1], wires[3]]));
      const [copy] = harness.copies;
      expect(idOf(copy)).toBe(idOf(wires[2]));
      expect(copy.headers[MessageHeaders.FAILURE_CATEGORY]).toBe('VALIDATION');
      expect(copy.headers[MessageHeaders.FAILURE_CODE]).toBe('TransactionAbortedError/23505');
      expect(callCounts(harness, wires)).toEqual([2, 2, 1, 1]);
    });

    it('sends each again alone when COMMIT answers ROLLBACK (an error nobody saw), and fails the one that did it', async () => {
      const wires = orders(3);
      const harness = new Harness();
      harness.onCall = (context) => {
        if (context.messageId === idOf(wires[1])) {
          (context.manager as unknown as FakeManager).swallow(uniqueViolation(), false);
        }
      };
      const settled = await harness.handleBatch(wires);

      expect(settled.map((s) => s.kind)).toEqual(['ACK', 'ACK', 'ACK']);
      expect(harness.inbox.applied).toEqual(ids([wires[0], wires[2]]));
      expect(harness.copies.map(idOf)).toEqual([idOf(wires[1])]);
      expect(harness.copies[0].headers[MessageHeaders.FAILURE_CODE]).toBe('TransactionAbortedError');
      expect(callCounts(harness, wires)).toEqual([2, 2, 2]);
    });
  });

  describe('after-commit callbacks', () => {
    /** A harness whose handler registers one callback per call, and the callbacks that ran. */
    const registering = (inbox: FakeInbox, harness = new Harness({ inbox })) => {
      const ran: string[] = [];
      harness.onCall = (context) => {
        const call = `${context.messageId}#${harness.callsOf(context.messageId).length}`;
        (context.manager as unknown as FakeManager).afterCommit.push(() => ran.push(call));
      };
      return { harness, ran };
    };

    it('run once per delivery after its commit', async () => {
      const inbox = new FakeInbox();
      const { harness, ran } = registering(inbox);
      const wires = orders(3);
      await harness.handleBatch(wires);
      expect(ran).toEqual(ids(wires).map((id) => `${id}#1`));
    });

    it('run when the answer to COMMIT was lost after the commit: the inbox shows it (DUPLICATE) on the next try', async () => {
      const inbox = new FakeInbox();
      inbox.commitAnswers.push('LOST');
      const { harness, ran } = registering(inbox);
      const wires = orders(3);
      await expect(harness.handleBatch(wires)).resolves.toEqual([ACK, ACK, ACK]);
      // Applied once, in the batch whose answer was lost; each went again alone and found itself handled.
      expect(inbox.applied).toEqual(ids(wires));
      expect(harness.calls).toHaveLength(3);
      expect(ran).toEqual(ids(wires).map((id) => `${id}#1`));
    });

    it('are dropped when the commit did not happen: the handler runs again and its new callbacks run', async () => {
      const inbox = new FakeInbox();
      inbox.commitAnswers.push('FAIL');
      const { harness, ran } = registering(inbox);
      const wires = orders(2);
      await expect(harness.handleBatch(wires)).resolves.toEqual([ACK, ACK]);
      expect(ran).toEqual(ids(wires).map((id) => `${id}#2`));
    });

    it('run for a single delivery whose commit answer was lost: it goes again once, and finds itself handled', async () => {
      const inbox = new FakeInbox();
      inbox.commitAnswers.push('LOST');
      const { harness, ran } = registering(inbox);
      const wire = orderWire();
      await expect(harness.handle(wire)).resolves.toEqual(ACK);
      expect(harness.calls).toHaveLength(1);
      expect(inbox.batches).toEqual([[idOf(wire)], [idOf(wire)]]);
      expect(ran).toEqual([`${idOf(wire)}#1`]);
      expect(harness.copies).toEqual([]);
    });

    it('run, and nothing is dead-lettered, when the second commit is the one that held and its answer was lost', async () => {
      const inbox = new FakeInbox();
      inbox.commitAnswers.push('FAIL', 'LOST');
      const { harness, ran } = registering(inbox); // no policy: a failure is dead-lettered at once
      const wire = orderWire();
      await expect(harness.withTimePassing(harness.handle(wire))).resolves.toEqual(ACK);
      expect(inbox.applied).toEqual([idOf(wire)]);
      expect(ran).toEqual([`${idOf(wire)}#2`]);
      expect(harness.copies).toEqual([]);
    });

    it('run, and nothing is dead-lettered, when the database stays away after the lost answer', async () => {
      const inbox = new FakeInbox();
      inbox.commitAnswers.push('LOST');
      inbox.beginAnswers.push('OK', ...Array<'FAIL'>(8).fill('FAIL'));
      const harness = new Harness({ inbox, policy: { maxAttempts: 2, mode: RetryMode.INLINE } });
      const { ran } = registering(inbox, harness);
      const wire = orderWire();
      await expect(harness.withTimePassing(harness.handle(wire))).resolves.toEqual(ACK);
      // Committed at the first try; the next one waited for the database, then found it handled.
      expect(harness.calls).toHaveLength(1);
      expect(inbox.beginAnswers).toEqual([]);
      expect(ran).toEqual([`${idOf(wire)}#1`]);
      expect(harness.copies).toEqual([]);
    });
  });

  describe('inline retries', () => {
    const inline = { maxAttempts: 3, mode: RetryMode.INLINE, ordering: RetryOrdering.ALLOW_REORDER };

    it('waits the jittered backoff on the clock before calling the handler again', async () => {
      const harness = new Harness({ policy: { ...inline, backoff: FAST }, failWhile: (a) => a < 2 });
      const settled = harness.handle(orderWire());
      await harness.clock.advance(0);
      expect(harness.calls).toHaveLength(1);
      // Full jitter with random() = 0.5 over [0, 1000]: 500 ms.
      await harness.clock.advance(499);
      expect(harness.calls).toHaveLength(1);
      await harness.clock.advance(1);
      await expect(settled).resolves.toEqual({ kind: 'ACK' });
      expect(harness.calls.map((c) => c.attempt)).toEqual([1, 2]);
    });

    it('keeps the consumer alive once a second during a long wait', async () => {
      const backoff = { initialDelayMs: 10_000, multiplier: 2, maxDelayMs: 10_000 };
      const harness = new Harness({ policy: { ...inline, backoff }, failWhile: (a) => a < 2 });
      const settled = harness.handle(orderWire());
      await harness.clock.advance(5_000); // a 5000 ms wait
      await expect(settled).resolves.toEqual({ kind: 'ACK' });
      expect(harness.keepAlives).toBe(5);
    });

    it('leaves the delivery unsettled when the consumer stops during the wait', async () => {
      const harness = new Harness({ policy: { ...inline, backoff: FAST }, failWhile: () => true });
      const settled = harness.handle(orderWire());
      await harness.clock.advance(0);
      harness.pipeline.stop();
      await harness.clock.advance(1_000);
      await expect(settled).resolves.toEqual({ kind: 'LEAVE' });
      expect(harness.calls).toHaveLength(1);
    });
  });

  describe('attempts retried in place', () => {
    const pause = { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, backoff: FAST };

    it('are counted in the inbox, so that another consumer (after a restart) goes on from there', async () => {
      const inbox = new FakeInbox();
      const wire = orderWire();
      const first = new Harness({ policy: pause, failWhile: () => true, inbox });
      await expect(first.handle(wire)).resolves.toEqual({ kind: 'PAUSE', delayMs: 500 });
      await expect(first.handle(wire)).resolves.toEqual({ kind: 'PAUSE', delayMs: 1_000 });

      const restarted = new Harness({ policy: pause, failWhile: () => true, inbox });
      await expect(restarted.handle(wire)).resolves.toEqual({ kind: 'ACK' });
      expect(restarted.calls.map((c) => c.attempt)).toEqual([3]);
      expect(restarted.copies[0].headers[MessageHeaders.RETRY_ATTEMPT]).toBe('3');
      expect(inbox.failed.size).toBe(0);
    });

    it('count inline retries too', async () => {
      const inbox = new FakeInbox();
      const inline = { ...pause, mode: RetryMode.INLINE, ordering: RetryOrdering.ALLOW_REORDER };
      const harness = new Harness({ policy: inline, failWhile: () => true, inbox });
      const wire = orderWire();
      const settled = harness.handle(wire);
      await harness.clock.advance(0);
      expect(inbox.failed.get(wire.headers[MessageHeaders.ID])).toBe(1);
      harness.pipeline.stop(); // the consumer stops during the wait: the count stays
      await harness.clock.advance(1_000);
      await expect(settled).resolves.toEqual({ kind: 'LEAVE' });
      expect(inbox.failed.get(wire.headers[MessageHeaders.ID])).toBe(1);
    });

    it('ignore a msg.retry-attempt on a message of the destination itself', async () => {
      const harness = new Harness({ policy: pause, failWhile: () => true });
      const forged = orderWire(undefined, { [MessageHeaders.RETRY_ATTEMPT]: '99' });
      await expect(harness.handle(forged)).resolves.toEqual({ kind: 'PAUSE', delayMs: 500 });
      expect(harness.calls.map((c) => c.attempt)).toEqual([1]);

      const retried = orderWire(undefined, { [MessageHeaders.RETRY_ATTEMPT]: '1' });
      await harness.handle(retried, 1_000);
      expect(harness.calls.map((c) => c.attempt)).toEqual([1, 2]);
    });
  });

  describe('BROKER_DELAYED on RabbitMQ (one TTL queue per delay tier)', () => {
    /**
     * RabbitMQ in miniature: a copy published to a retry queue comes back to the consumer when the queue's
     * TTL expires (the tier in its name), marked with that tier, as the subscriber marks it.
     */
    function runWithTtlQueues(harness: Harness): void {
      const publish = harness.transport.publishCopies.bind(harness.transport);
      harness.transport.publishCopies = async (copies) => {
        const outcomes = await publish(copies);
        for (const copy of copies) {
          const tier = /\.retry\.(\d+)ms$/.exec(copy.destination);
          if (!tier) continue;
          const back = { ...copy, destination: DESTINATION };
          harness.clock.setTimeout(() => void harness.handle(back, Number(tier[1])), Number(tier[1]));
        }
        return outcomes;
      };
    }

    /** A uniform source in [0, 1) of its own seed, so that the run is the same every time. */
    function seeded(seed: number): () => number {
      let state = seed;
      return () => {
        state = (state + 0x6d2b79f5) | 0;
        let t = Math.imul(state ^ (state >>> 15), 1 | state);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
      };
    }

    it('keeps full jitter: first retries spread uniformly over [0, initialDelay], not all at one tier', async () => {
      const MESSAGES = 1_000;
      const policy = { maxAttempts: 3, mode: RetryMode.BROKER_DELAYED, backoff: FAST }; // 1000, 2000, 4000
      const failedAt = new Map<string, number>();
      const waited: number[] = [];
      const harness = new Harness({ capabilities: RABBITMQ, policy, failWhile: (attempt) => attempt < 2 });
      harness.clock.setRandom(seeded(7));
      harness.onCall = (context) => {
        if (context.attempt === 1) failedAt.set(context.messageId, harness.clock.now());
        else waited.push(harness.clock.now() - failedAt.get(context.messageId)!);
      };
      runWithTtlQueues(harness);

      for (let i = 0; i < MESSAGES; i++) void harness.handle(orderWire({ orderId: i, customer: `c${i}` }));
      while (waited.length < MESSAGES) await harness.clock.advance(50);

      // Ten buckets of 100 ms: each holds about a tenth of the retries (uniform), none all of them.
      const buckets = Array.from({ length: 10 }, (_, b) =>
        waited.filter((w) => Math.min(9, Math.floor(w / 100)) === b),
      );
      for (const bucket of buckets) expect(Math.abs(bucket.length / MESSAGES - 0.1)).toBeLessThan(0.025);
      expect(Math.max(...waited)).toBeLessThanOrEqual(1_000);
      // Each message came back when its own jittered delay was up: the delay drawn is the delay waited.
      expect(new Set(waited).size).toBeGreaterThan(MESSAGES / 4);
    }, 20_000); // 1,000 messages, each delivered twice: 0.3 s on a quiet core; twice as many took over 5 s in CI
  });

  describe('dead-lettering', () => {
    it('publishes the copy to the group dead-letter destination, then answers ACK', async () => {
      const harness = new Harness({ failWhile: () => true });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'ACK' });
      expect(harness.copies.map((c) => c.destination)).toEqual([`${DESTINATION}.${GROUP}.dlq`]);
      expect(harness.copies[0].headers[MessageHeaders.FAILURE_CATEGORY]).toBe('TRANSIENT');
    });

    it('tries a refused copy again after the republish backoff and answers ACK only once it is confirmed', async () => {
      const harness = new Harness({ failWhile: () => true });
      harness.answers.push('REJECTED', 'AMBIGUOUS');
      let settlement: Settlement | undefined;
      void harness.handle(orderWire()).then((s) => (settlement = s));
      await harness.clock.advance(0);
      expect(harness.copies).toHaveLength(1);
      await harness.clock.advance(100); // 200 ms × 0.5
      expect(harness.copies).toHaveLength(2);
      expect(settlement).toBeUndefined();
      await harness.clock.advance(200); // 400 ms × 0.5
      expect(harness.copies).toHaveLength(3);
      expect(settlement).toEqual({ kind: 'ACK' });
    });

    it('leaves the source unsettled when the consumer stops before the copy is confirmed', async () => {
      const harness = new Harness({ failWhile: () => true });
      harness.answers.push(...Array<'REJECTED'>(10).fill('REJECTED'));
      const settled = harness.handle(orderWire());
      await harness.clock.advance(0);
      harness.stopping = true;
      await expect(harness.withTimePassing(settled)).resolves.toEqual({ kind: 'LEAVE' });
      expect(harness.copies).toHaveLength(1);
    });
  });

  describe('messages no handler can take', () => {
    const POLICIES: Array<[string, TransportCapabilities, RetryPolicyOptions]> = [
      ['Kafka PAUSE_PARTITION', KAFKA, { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION }],
      ['Kafka INLINE, PRESERVE', KAFKA, { maxAttempts: 3, mode: RetryMode.INLINE }],
      [
        'Kafka INLINE, ALLOW_REORDER',
        KAFKA,
        { maxAttempts: 3, mode: RetryMode.INLINE, ordering: RetryOrdering.ALLOW_REORDER },
      ],
      [
        'Kafka RETRY_DESTINATION, ALLOW_REORDER',
        KAFKA,
        { maxAttempts: 3, mode: RetryMode.RETRY_DESTINATION, ordering: RetryOrdering.ALLOW_REORDER },
      ],
      ['RabbitMQ INLINE', RABBITMQ, { maxAttempts: 3, mode: RetryMode.INLINE }],
      ['RabbitMQ BROKER_DELAYED', RABBITMQ, { maxAttempts: 3, mode: RetryMode.BROKER_DELAYED }],
    ];
    const BAD: Array<[string, (wire: WireMessage) => WireMessage, string]> = [
      ['a schema mismatch', () => orderWire({ orderId: 'one' }), 'SCHEMA_MISMATCH'],
      ['an unknown type', () => orderWire({}, {}, DESTINATION, 'OrderShipped'), 'UNKNOWN_TYPE'],
      ['an undecodable body', (wire) => ({ ...wire, body: Buffer.from('<xml/>') }), 'INVALID_JSON'],
    ];

    it.each(
      POLICIES.flatMap(([name, capabilities, policy]) =>
        BAD.map((bad) => [name, ...bad, capabilities, policy] as const),
      ),
    )('%s: dead-letters %s on its first delivery', async (_name, _what, make, code, capabilities, policy) => {
      // Unknown types only with `unhandledTypes: 'dead-letter'` (they are settled by default: its own spec).
      const consumers = { unhandledTypes: 'dead-letter' as const };
      const harness = new Harness({
        capabilities,
        policy,
        retryDefaults: { [DESTINATION]: policy },
        consumers,
      });
      await expect(harness.handle(make(orderWire()))).resolves.toEqual({ kind: 'ACK' });
      expect(harness.copies.map((c) => c.destination)).toEqual([`${DESTINATION}.${GROUP}.dlq`]);
      expect(harness.copies[0].headers[MessageHeaders.FAILURE_CODE]).toBe(code);
      expect(harness.copies[0].headers[MessageHeaders.RETRY_ATTEMPT]).toBe('1');
      expect(harness.calls).toEqual([]);
    });

    it("drops it instead when the policy's onNonRetryable says REJECT", async () => {
      const policy = { maxAttempts: 3, mode: RetryMode.INLINE, onNonRetryable: 'REJECT' as const };
      const harness = new Harness({ policy });
      await expect(harness.handle(orderWire({ orderId: 'one' }))).resolves.toEqual({ kind: 'DROP' });
      expect(harness.copies).toEqual([]);
    });
  });

  describe('retry defaults', () => {
    it('finds no default for a destination named like an Object.prototype member', async () => {
      const harness = new Harness({ consumers: { unhandledTypes: 'dead-letter' } });
      const unknown = orderWire({}, {}, 'constructor', 'Unknown');
      await expect(harness.handle(unknown)).resolves.toEqual({ kind: 'ACK' });
      expect(harness.copies.map((c) => c.destination)).toEqual([`constructor.${GROUP}.dlq`]);
      expect(harness.copies[0].headers[MessageHeaders.FAILURE_CODE]).toBe('UNKNOWN_TYPE');
    });
  });

  describe('other decisions', () => {
    it('pauses in place on an ordered stream (Kafka) for the jittered delay', async () => {
      const policy = { maxAttempts: 3, mode: RetryMode.PAUSE_PARTITION, backoff: FAST };
      const harness = new Harness({ policy, failWhile: () => true });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'PAUSE', delayMs: 500 });
      expect(harness.copies).toEqual([]);
    });

    it('publishes to the retry destination of the tier, due at now + delay', async () => {
      const policy = {
        maxAttempts: 3,
        mode: RetryMode.RETRY_DESTINATION,
        ordering: RetryOrdering.ALLOW_REORDER,
        backoff: FAST,
      };
      const harness = new Harness({ policy, failWhile: () => true });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'ACK' });
      const [copy] = harness.copies;
      expect(copy.destination).toMatch(new RegExp(`^${DESTINATION}\\.${GROUP}\\.retry\\.\\d+ms$`));
      expect(copy.headers[MessageHeaders.RETRY_DUE_AT]).toBe('2026-12-01T00:00:00.500Z');
      expect(copy.headers[MessageHeaders.RETRY_ATTEMPT]).toBe('1');
    });

    it('drops a non-retryable failure without a copy when the policy says REJECT', async () => {
      const policy = {
        maxAttempts: 3,
        mode: RetryMode.INLINE,
        onNonRetryable: 'REJECT' as const,
      };
      const forbidden = () => Object.assign(new Error('permission denied'), { code: '42501' });
      const harness = new Harness({ policy, failWhile: () => true, error: forbidden });
      await expect(harness.handle(orderWire())).resolves.toEqual({ kind: 'DROP' });
      expect(harness.copies).toEqual([]);
    });
  });
});
