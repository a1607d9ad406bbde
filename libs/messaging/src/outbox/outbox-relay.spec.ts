import { Logger } from '@nestjs/common';
import { FakeClock } from '../common/fake-clock';
import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { MessageTracing } from '../observability/message-tracing';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { resolveMessagingOptions } from '../options/resolve-messaging-options';
import { MessageTransport } from '../transports/message-transport.interface';
import { PublishOutcome } from '../transports/publish-outcome';
import { MARK_SENT_WAIT_MS, OutboxRelay, RelayRoundResult } from './outbox-relay';
import { ClaimedOutboxRow, FailedOutboxRow } from './outbox-row';
import { OutboxStore } from './outbox-store';
import { RelayWakeup } from './relay-wakeup';
import { useQuietWarnings } from '../../spec-support/quiet-warnings';
import { startModelWorld } from '../../spec-support/model-relays';
import { turnless } from '../../spec-support/turnless-clock';

const POLL_MS = 10_000;

/** An outbox table in memory: pending rows, what was claimed, sent and failed. */
class FakeStore {
  marksSentInClaim = true;
  readonly pending: ClaimedOutboxRow[] = [];
  readonly sent: string[] = [];
  readonly failed: FailedOutboxRow[] = [];
  claims = 0;
  /** Claims that were handed rows to mark sent. */
  claimedWithSent = 0;
  /** How many times rows were marked sent on their own (`markSent`), not by a claim. */
  markSentCalls = 0;
  readonly released: string[] = [];
  heldRowFreeAt?: Date;
  /** The relay's clock (set by `startRelay`), for the scheduled messages' due times. */
  clock?: FakeClock;
  /** Scheduled messages not yet moved: their due time (this clock) and key. */
  readonly scheduled: Array<{ dueAt: number; key: string }> = [];
  /** Answered by the next move as dropped (their ids taken in the outbox): one entry each. */
  readonly dropOnMove: unknown[] = [];
  /** Moves of due scheduled messages asked for, and when (this clock). */
  readonly moves: number[] = [];
  /** Runs as the relay looks for held rows (then cleared): what changes meanwhile. */
  duringLook?: () => void;

  /** Adds rows, each with a key of its own unless `key` is given. */
  add(count: number, key?: string): void {
    for (let i = 0; i < count; i++) {
      const id = String(this.pending.length + this.sent.length + 1);
      this.pending.push({
        id,
        messageId: `00000000-0000-7000-8000-${id.padStart(12, '0')}`,
        destination: 'orders',
        type: 'OrderPlaced',
        key: key ?? `k${id}`,
        headers: {},
        payloadJson: '{}',
        occurredAt: new Date(),
        createdAt: new Date(),
        attempts: 0,
      });
    }
  }

  async claim(
    limit: number,
    _owner: string,
    _leaseMs: number,
    inFlight: readonly string[] = [],
    sent: readonly string[] = [],
  ) {
    this.claims += 1;
    if (sent.length > 0) this.claimedWithSent += 1;
    this.markRows(sent);
    return this.pending.filter((row) => !inFlight.includes(row.id)).slice(0, limit);
  }

  async markSent(ids: readonly string[]): Promise<void> {
    this.markSentCalls += 1;
    this.markRows(ids);
  }

  private markRows(ids: readonly string[]): void {
    this.sent.push(...ids);
    ids.forEach((id) =>
      this.pending.splice(
        this.pending.findIndex((row) => row.id === id),
        1,
      ),
    );
  }

  async markFailed(rows: readonly FailedOutboxRow[]): Promise<void> {
    this.failed.push(...rows);
  }

  async releaseRows(ids: readonly string[]): Promise<void> {
    this.released.push(...ids);
  }
  async release(): Promise<number> {
    return 0;
  }
  /** Due ones become pending rows, in due order; answers the time until the next. */
  async moveDueScheduled(
    limit: number,
  ): Promise<{ moved: number; nextDueInMs: number | undefined; dropped?: number }> {
    const now = this.clock?.now() ?? 0;
    this.moves.push(now);
    this.scheduled.sort((a, b) => a.dueAt - b.dueAt);
    const due = this.scheduled.filter((m) => m.dueAt <= now).slice(0, limit);
    due.forEach((m) => {
      this.scheduled.splice(this.scheduled.indexOf(m), 1);
      this.add(1, m.key);
    });
    const next = this.scheduled.length === 0 ? undefined : this.scheduled[0].dueAt - now;
    return { moved: due.length, nextDueInMs: next, dropped: this.dropOnMove.splice(0).length };
  }

  async nextHeldRowFreeAt(): Promise<Date | undefined> {
    const during = this.duringLook;
    this.duringLook = undefined;
    during?.();
    return this.heldRowFreeAt;
  }
}

/** A broker that confirms, or refuses everything while `down`, or the messages of the keys in `refusing`. */
class FakeTransport {
  readonly kind = 'kafka';
  down = false;
  /** Thrown by the next publish, as a client does on a closed connection. */
  throwing?: Error;
  readonly refusing = new Set<string>();
  readonly published: WireMessage[][] = [];

  /** Runs as the next publish goes out (then cleared): what happens while a batch is on the wire. */
  duringPublish?: () => void;

  async publish(messages: readonly WireMessage[]): Promise<PublishOutcome[]> {
    this.published.push([...messages]);
    const during = this.duringPublish;
    this.duringPublish = undefined;
    during?.();
    const thrown = this.throwing;
    this.throwing = undefined;
    if (thrown) throw thrown;
    return messages.map((m) =>
      this.down || this.refusing.has(m.key ?? '')
        ? { status: 'REJECTED', error: new Error('broker down') }
        : { status: 'CONFIRMED' },
    );
  }

  /** The message ids of each publish, by their outbox row's id (the fake store's ids end them). */
  publishedRows(): string[][] {
    return this.published.map((batch) =>
      batch.map((m) => String(Number(m.headers[MessageHeaders.ID].slice(-12)))),
    );
  }
}

function startRelay(relayOptions: { batchSize?: number } = {}) {
  const store = new FakeStore();
  const transport = new FakeTransport();
  const wakeup = new RelayWakeup();
  const clock = new FakeClock();
  store.clock = clock;
  const options = resolveMessagingOptions({
    serviceName: 'unit',
    transport: { kind: 'kafka', brokers: ['127.0.0.1:9092'] },
    relay: { pollIntervalMs: POLL_MS, retryInitialDelayMs: 200, retryMaxDelayMs: 1_000, ...relayOptions },
  });
  const relay = new OutboxRelay(
    store as unknown as OutboxStore,
    transport as unknown as MessageTransport,
    wakeup,
    options,
    new MessagingMetrics(),
    new MessageTracing(),
    turnless(clock),
  );
  const rounds: RelayRoundResult[] = [];
  relay.onRound((round) => rounds.push(round));
  relay.onApplicationBootstrap();
  return { clock, relay, store, transport, wakeup, rounds };
}

describe(OutboxRelay.name, () => {
  useQuietWarnings();

  describe('wake', () => {
    it('publishes what a commit wrote at once, without waiting for the poll', async () => {
      const { clock, store, transport, wakeup, rounds } = startRelay();
      await clock.advance(0);
      store.add(3);
      wakeup.fire();
      await clock.advance(0);
      expect(transport.publishedRows()).toEqual([['1', '2', '3']]);
      await clock.advance(MARK_SENT_WAIT_MS); // no commit came: the batch is marked on its own
      expect(store.sent).toEqual(['1', '2', '3']);
      expect(rounds.filter((r) => r.claimed > 0)).toEqual([{ claimed: 3, confirmed: 3, failed: 0 }]);
    });

    // A claim takes two publish batches, which go out one after the other; the last round of a drain is
    // marked on its own either way; each round is reported once its rows are marked. The third claim was
    // not full (one row): no claim goes out beside its publish (it would find nothing), so the round before
    // is marked on its own.
    it.each([
      ['with the next claim (PostgreSQL)', true, { markSentCalls: 2, claimedWithSent: 1 }],
      ['beside the next claim, on its own (MySQL/MariaDB)', false, { markSentCalls: 3, claimedWithSent: 0 }],
    ])('marks each round sent %s', async (_, marksSentInClaim, expected) => {
      const { clock, store, transport, wakeup, rounds } = startRelay({ batchSize: 2 });
      store.marksSentInClaim = marksSentInClaim;
      await clock.advance(0);
      store.add(9);
      wakeup.fire();
      await clock.advance(MARK_SENT_WAIT_MS);
      expect(store.sent).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9']);
      expect(transport.publishedRows()).toEqual([['1', '2'], ['3', '4'], ['5', '6'], ['7', '8'], ['9']]);
      expect({ markSentCalls: store.markSentCalls, claimedWithSent: store.claimedWithSent }).toEqual(
        expected,
      );
      expect(rounds.filter((r) => r.claimed > 0).map((r) => r.confirmed)).toEqual([4, 4, 1]);
    });

    it("does not publish a key's later rows from a claim's next batch once one of its messages was refused", async () => {
      const { clock, store, transport, wakeup } = startRelay({ batchSize: 2 });
      await clock.advance(0);
      store.add(1, 'a'); // 1
      store.add(1, 'b'); // 2
      store.add(1, 'a'); // 3: behind 1, which is refused
      store.add(1, 'c'); // 4
      transport.refusing.add('a');
      wakeup.fire();
      await clock.advance(MARK_SENT_WAIT_MS);
      expect(transport.publishedRows()[0]).toEqual(['1', '2']);
      expect(transport.publishedRows()[1]).toEqual(['4']);
      expect(store.released).toContain('3');
      expect(store.failed.map((f) => f.id)).toEqual(['1']);
      expect(store.sent).toEqual(['2', '4']);
    });

    it("stops a claim's publishing when a batch had nothing confirmed, and releases the rest untried", async () => {
      const { clock, store, transport, wakeup } = startRelay({ batchSize: 2 });
      await clock.advance(0);
      transport.down = true;
      store.add(4);
      wakeup.fire();
      await clock.advance(0);
      expect(transport.publishedRows()).toEqual([['1', '2']]);
      expect(store.failed.map((f) => f.id)).toEqual(['1', '2']);
      expect(store.released).toEqual(['3', '4']);
    });

    // Issue 39: at a steady trickle the claim beside each publish found nothing (3 statements per message).
    it('sends no claim beside a publish when the claim took every pending row: a claim and a mark per message', async () => {
      const { clock, store, wakeup, rounds } = startRelay();
      await clock.advance(0);
      for (let i = 1; i <= 3; i++) {
        const claims = store.claims;
        const marks = store.markSentCalls;
        store.add(1);
        wakeup.fire();
        await clock.advance(MARK_SENT_WAIT_MS);
        expect(store.sent).toHaveLength(i);
        expect([store.claims - claims, store.markSentCalls - marks]).toEqual([1, 1]);
      }
      expect(rounds.filter((r) => r.claimed > 0)).toHaveLength(3);
    });

    // Issue 39: at 200/s, one commit every 5 ms each published in a round of its own, every round was marked on
    // its own after its publish (2 statements per message); the next commit's claim now marks it.
    it("marks a round with the next commit's claim when it comes within the wait: one statement per message", async () => {
      const { clock, store, transport, wakeup, rounds } = startRelay();
      await clock.advance(0);
      const claims = store.claims;
      for (let i = 1; i <= 10; i++) {
        store.add(1);
        wakeup.fire();
        await clock.advance(5);
        expect(transport.publishedRows()).toHaveLength(i); // published at once: no wait before the publish
      }
      expect([store.claims - claims, store.claimedWithSent, store.markSentCalls]).toEqual([10, 9, 0]);
      expect(store.sent).toHaveLength(9);
      await clock.advance(MARK_SENT_WAIT_MS); // no commit came: the last round is marked on its own
      expect([store.claims - claims, store.markSentCalls]).toEqual([10, 1]);
      expect(store.sent).toHaveLength(10);
      expect(rounds.filter((r) => r.claimed > 0)).toHaveLength(10);
    });

    it('marks a waiting round before shutting down', async () => {
      const { clock, relay, store, wakeup, rounds } = startRelay();
      await clock.advance(0);
      store.add(1);
      wakeup.fire();
      await clock.advance(1);
      expect(store.sent).toEqual([]);
      await relay.beforeApplicationShutdown();
      expect(store.sent).toEqual(['1']);
      expect(rounds.filter((r) => r.claimed > 0)).toHaveLength(1);
    });

    it.each([
      ['in the claim (PostgreSQL)', true, { claimedWithSent: 1, markSentCalls: 1 }],
      ['beside the claim (MySQL/MariaDB)', false, { claimedWithSent: 0, markSentCalls: 2 }],
    ])(
      'marks a batch %s that follows a commit during its publish, and reports it once marked',
      async (_, marksSentInClaim, expected) => {
        const { clock, store, transport, wakeup, rounds } = startRelay();
        store.marksSentInClaim = marksSentInClaim;
        await clock.advance(0);
        const claims = store.claims;
        store.add(1);
        transport.duringPublish = () => {
          store.add(1);
          wakeup.fire();
        };
        wakeup.fire();
        await clock.advance(MARK_SENT_WAIT_MS);
        expect(store.sent).toEqual(['1', '2']);
        expect(store.claims - claims).toBe(2); // no empty claim beside either publish
        expect({ claimedWithSent: store.claimedWithSent, markSentCalls: store.markSentCalls }).toEqual(
          expected,
        );
        expect(rounds.filter((r) => r.claimed > 0)).toEqual([
          { claimed: 1, confirmed: 1, failed: 0 },
          { claimed: 1, confirmed: 1, failed: 0 },
        ]);
      },
    );

    it('marks a published batch before shutting down when a commit came during its publish', async () => {
      const { clock, relay, store, transport, wakeup } = startRelay();
      await clock.advance(0);
      store.add(1);
      let stopped!: Promise<void>;
      transport.duringPublish = () => {
        store.add(1);
        wakeup.fire();
        stopped = relay.beforeApplicationShutdown();
      };
      wakeup.fire();
      await clock.advance(0);
      await stopped;
      expect(store.sent).toEqual(['1']);
      expect(store.pending.map((row) => row.id)).toEqual(['2']);
    });

    it('folds wake-ups during a round into one more round', async () => {
      const { clock, relay, store } = startRelay();
      await clock.advance(0);
      const before = store.claims;
      for (let i = 0; i < 5; i++) relay.wake(); // the first starts a round, the others ask for one more
      await clock.advance(0);
      expect(store.claims - before).toBe(2);
    });
  });

  describe('safety poll', () => {
    it('claims once per poll interval while idle, and nothing in between', async () => {
      const { clock, store } = startRelay();
      await clock.advance(0);
      const atStart = store.claims; // the round at bootstrap
      await clock.advance(POLL_MS - 1);
      expect(store.claims).toBe(atStart);
      await clock.advance(1);
      expect(store.claims).toBe(atStart + 1);
      await clock.advance(5 * POLL_MS);
      expect(store.claims).toBe(atStart + 6);
    });
  });

  describe('broker down', () => {
    // claim: C-25
    it('backs off (exponential, jittered) after each failed round and publishes once the broker is back', async () => {
      const world = startModelWorld({
        relay: { retryInitialDelayMs: 200, retryMaxDelayMs: 1_000 },
        script: [
          { outcomes: ['reject'], delayMs: 0 },
          { outcomes: ['reject'], delayMs: 0 },
        ],
      });
      const { broker, clock, store } = world;
      await clock.advance(0);
      const start = clock.now();
      world.commit(2);
      await clock.advance(0);
      expect(broker.calls).toHaveLength(1);
      expect(store.rows.map((r) => r.availableAt - start)).toEqual([100, 100]); // 200 ms × 0.5

      // The relay resumes half-way (a round for other rows) and wakes again when these are due.
      await clock.advance(109);
      expect(broker.calls).toHaveLength(1);
      await clock.advance(1);
      expect(broker.calls).toHaveLength(2);
      expect(store.rows.map((r) => r.availableAt - start)).toEqual([310, 310]); // 400 ms × 0.5, from 110

      await clock.advance(209);
      expect(broker.calls).toHaveLength(2);
      await clock.advance(1);
      expect(broker.calls).toHaveLength(3);
      await clock.advance(MARK_SENT_WAIT_MS);
      expect(store.pending()).toEqual([]);
      await world.stop();
    });

    it('says an outage once, then a summary every 30 s and once when it works again (not a line a round)', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
      try {
        const { clock, store, transport, wakeup } = startRelay();
        await clock.advance(0);
        transport.down = true;
        store.add(1);
        wakeup.fire();
        await clock.advance(45_000); // rounds every 0.1–2 s: dozens of failed rounds
        const rounds = store.claims;
        const lines = warn.mock.calls
          .map(([line]) => String(line))
          .filter((l) => l.includes('not confirmed'));
        expect(rounds).toBeGreaterThan(20);
        expect(lines).toHaveLength(2); // when it started, and the summary at 30 s
        expect(lines[1]).toMatch(/still failing after 3\d s/);
        transport.down = false;
        await clock.advance(5_000);
        expect(log.mock.calls.some(([line]) => /works again after/.test(String(line)))).toBe(true);
      } finally {
        warn.mockRestore();
        log.mockRestore();
      }
    });

    it('does not claim while it backs off, however often it is woken', async () => {
      const { clock, store, transport, wakeup } = startRelay();
      await clock.advance(0);
      transport.down = true;
      store.add(1);
      wakeup.fire();
      await clock.advance(0);
      const claims = store.claims;
      for (let i = 0; i < 10; i++) wakeup.fire();
      await clock.advance(49); // half the rows' delay of 100 ms
      expect(store.claims).toBe(claims);
    });
  });

  describe('held rows', () => {
    // Seen on a loaded CI machine: a failed row's backoff ended after the empty claim and before the look for
    // held rows, so that neither saw it, and it waited for the safety poll (a minute in outbox-rabbitmq).
    it('publishes a row that came due between its empty claim and its look for held rows, without waiting for the poll', async () => {
      const { clock, store } = startRelay();
      store.duringLook = () => store.add(1); // due now: the look finds no row still held
      await clock.advance(0); // the bootstrap round: an empty claim, then the look
      await clock.advance(POLL_MS - 1);
      expect(store.sent).toEqual(['1']);
    });

    it('wakes when a row held by a lease or a backoff frees up, rather than at the next poll', async () => {
      const { clock, store } = startRelay();
      store.heldRowFreeAt = new Date(clock.now() + 3_000);
      await clock.advance(0); // the bootstrap round finds nothing and asks when rows free up
      const claims = store.claims;
      store.add(1);
      await clock.advance(3_000 + 9);
      expect(store.claims).toBe(claims);
      await clock.advance(1);
      expect(store.claims).toBe(claims + 1);
      await clock.advance(MARK_SENT_WAIT_MS);
      expect(store.sent).toEqual(['1']);
    });
  });

  describe('scheduled messages', () => {
    it('wakes when the next scheduled message is due, not at the next poll, and publishes it then', async () => {
      const { clock, store, transport, wakeup } = startRelay();
      await clock.advance(0); // the bootstrap round
      store.scheduled.push({ dueAt: clock.now() + 1_500, key: 'reminder' });
      wakeup.fire({ scheduled: true }); // the scheduling transaction committed: nothing due, the next in 1,500 ms
      await clock.advance(0);
      expect(store.moves).toHaveLength(2);
      const claims = store.claims;
      await clock.advance(1_500 - 1);
      expect(store.claims).toBe(claims);
      expect(store.moves).toHaveLength(2); // no look in between
      await clock.advance(10); // due, plus the slack after the database's "due in"
      expect(store.moves).toHaveLength(3);
      expect(transport.publishedRows()).toEqual([['1']]);
      await clock.advance(MARK_SENT_WAIT_MS);
      expect(store.sent).toEqual(['1']);
    });

    it('looks again when a local transaction scheduled a message due before the wake-up it had set', async () => {
      const { clock, store, wakeup } = startRelay();
      store.scheduled.push({ dueAt: clock.now() + 5_000, key: 'late' });
      await clock.advance(0);
      store.scheduled.push({ dueAt: clock.now() + 1_000, key: 'early' });
      wakeup.fire({ scheduled: true });
      await clock.advance(1_000 + 10 + MARK_SENT_WAIT_MS);
      expect(store.pending.length + store.sent.length).toBe(1);
      expect(store.sent).toEqual(['1']);
      await clock.advance(4_000);
      expect(store.sent).toEqual(['1', '2']);
    });

    // The merge of issue 39's relay (a claim answers the wake-ups before it) with scheduled messages: a
    // scheduling commit signalled after the round's look and before its last claim was cleared by that claim,
    // and the message waited for the safety poll (outbox-scheduled.test.ts on MariaDB, first case).
    it('looks at the scheduled messages when one is scheduled after the round looked, before its last claim', async () => {
      const { clock, store, wakeup } = startRelay();
      store.duringLook = () => {
        store.scheduled.push({ dueAt: clock.now() + 1_500, key: 'reminder' });
        wakeup.fire({ scheduled: true });
      };
      await clock.advance(0); // the bootstrap round: look, claim, look for held rows (the commit), claim
      await clock.advance(1_500 + 10 + MARK_SENT_WAIT_MS);
      expect(store.sent).toEqual(['1']);
    });

    it('does not look at the scheduled messages on a plain commit while the next is not due', async () => {
      const { clock, store, wakeup } = startRelay();
      store.scheduled.push({ dueAt: clock.now() + 5_000, key: 'later' });
      await clock.advance(0);
      store.add(1);
      wakeup.fire();
      await clock.advance(MARK_SENT_WAIT_MS);
      expect(store.sent).toEqual(['1']);
      expect(store.moves).toHaveLength(1);
    });

    // claim: C-111
    it('warns when a move found due messages whose ids the outbox held already', async () => {
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      try {
        const { clock, store, wakeup } = startRelay();
        await clock.advance(0); // the bootstrap round
        store.scheduled.push({ dueAt: clock.now(), key: 'taken' });
        store.dropOnMove.push(1);
        wakeup.fire({ scheduled: true });
        await clock.advance(0);
        expect(store.moves).toHaveLength(2);
        expect(warn.mock.calls.map(([line]) => String(line))).toContainEqual(
          expect.stringMatching(
            /^1 due scheduled message\(s\) not published: the outbox held their message ids/,
          ),
        );
      } finally {
        warn.mockRestore();
      }
    });

    it('finds a message another instance scheduled at the safety poll, then wakes when it is due', async () => {
      const { clock, store } = startRelay();
      await clock.advance(0); // nothing scheduled: no wake-up set
      store.scheduled.push({ dueAt: clock.now() + POLL_MS + 2_000, key: 'elsewhere' });
      await clock.advance(POLL_MS);
      expect(store.moves).toHaveLength(2);
      await clock.advance(2_000 + 10 + MARK_SENT_WAIT_MS);
      expect(store.sent).toEqual(['1']);
    });
  });

  // The round's promise had no catch; what escaped it was an unhandled rejection.
  describe('failures inside a round', () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    beforeEach(() => {
      unhandled.length = 0;
      process.on('unhandledRejection', onUnhandled);
      jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    });
    afterEach(() => process.off('unhandledRejection', onUnhandled));

    it('takes a publish that throws as AMBIGUOUS: the rows are recorded failed and tried again', async () => {
      const { clock, store, transport, wakeup } = startRelay();
      await clock.advance(0);
      transport.throwing = new Error('Channel closed');
      store.add(2);
      wakeup.fire();
      await clock.advance(0);
      expect(store.failed.map((f) => [f.id, f.error])).toEqual([
        ['1', 'AMBIGUOUS: Error: Channel closed'],
        ['2', 'AMBIGUOUS: Error: Channel closed'],
      ]);
      await clock.advance(1_000);
      expect(store.sent).toEqual(['1', '2']);
      expect(unhandled).toEqual([]);
    });

    it('logs what escapes a round, backs off and goes on: no unhandled rejection', async () => {
      const { clock, relay, store, wakeup } = startRelay();
      await clock.advance(0);
      const stop = relay.onRound(() => {
        stop();
        throw new Error('a round listener broke');
      });
      store.add(1);
      wakeup.fire();
      await clock.advance(MARK_SENT_WAIT_MS); // the round is reported once marked
      expect(unhandled).toEqual([]);
      expect(jest.mocked(Logger.prototype.error).mock.calls[0][0]).toContain(
        'An outbox relay round failed: Error: a round listener broke',
      );
      store.add(1);
      wakeup.fire();
      await clock.advance(1_000);
      expect(store.sent).toEqual(['1', '2']);
    });
  });

  describe('beforeApplicationShutdown', () => {
    it('stops its timers: no claim after shutdown', async () => {
      const { clock, relay, store } = startRelay();
      await clock.advance(0);
      await relay.beforeApplicationShutdown();
      const claims = store.claims;
      await clock.advance(10 * POLL_MS);
      expect(store.claims).toBe(claims);
    });
  });
});
