import * as fc from 'fast-check';
import { CONFIRMED, PublishOutcome } from '../../transports/publish-outcome';
import { NewOutboxRow } from '../outbox-row';
import { PublishQueue, QueuedMessage, SettleContext } from './publish-queue';
import { DEFAULT_PARK_RULE } from './publishing-rules';

const REJECTED: PublishOutcome = { status: 'REJECTED', error: new Error('refused') };
const AMBIGUOUS: PublishOutcome = { status: 'AMBIGUOUS', error: new Error('no answer') };

let ids = 0;
function row(key: string, label = `${key}#${++ids}`): NewOutboxRow {
  return {
    messageId: label,
    destination: 'orders',
    type: 'OrderPlaced',
    key,
    headers: {},
    payloadJson: JSON.stringify({ label }),
    occurredAt: new Date(0),
  };
}

function context(overrides: Partial<SettleContext> = {}): SettleContext {
  return {
    now: 0,
    retryInMs: () => 100,
    brokerUp: true,
    park: { afterFailures: 3, afterMs: 60_000 },
    ...overrides,
  };
}

const labels = (batch: readonly QueuedMessage[]) => batch.map((e) => e.row.messageId);
const take = (queue: PublishQueue, now: number, max: number) => queue.take(now, max).publish;

describe(PublishQueue.name, () => {
  describe('add', () => {
    it('moves the confirmable position over a unit without messages', () => {
      const queue = new PublishQueue(10n);
      queue.add({ position: 20n, committedAtMs: 0, rows: [] });
      expect(queue.confirmable()).toBe(20n);
      expect(queue.retained).toBe(0);
    });

    it('holds the position before a unit whose messages are not done, and counts what it holds', () => {
      const queue = new PublishQueue(10n);
      queue.add({ position: 20n, committedAtMs: 0, rows: [row('a')] });
      queue.add({ position: 30n, committedAtMs: 0, rows: [] });
      expect(queue.confirmable()).toBe(10n);
      expect(queue.size).toBe(1);
      expect(queue.retained).toBe(3); // two units, one message
    });
  });

  describe('take', () => {
    it('hands out messages in source order, at most max', () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 1n, committedAtMs: 0, rows: [row('a', 'a1'), row('b', 'b1')] });
      queue.add({ position: 2n, committedAtMs: 0, rows: [row('a', 'a2')] });
      expect(labels(take(queue, 0, 2))).toEqual(['a1', 'b1']);
      expect(labels(take(queue, 0, 2))).toEqual([]); // a2 waits behind a1, on the wire
    });

    it('keeps a key behind its message that waits for a retry, and lets other keys go', () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 1n, committedAtMs: 0, rows: [row('a', 'a1')] });
      queue.add({ position: 2n, committedAtMs: 0, rows: [row('a', 'a2'), row('b', 'b1')] });
      queue.settle(take(queue, 0, 1), [AMBIGUOUS], context());
      expect(labels(take(queue, 50, 10))).toEqual(['b1']);
      expect(labels(take(queue, 100, 10))).toEqual(['a1', 'a2']);
    });

    it('sends a message that failed in company alone next time, and counts its failures only then', () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 1n, committedAtMs: 0, rows: [row('a', 'a1'), row('b', 'b1')] });
      const batch = take(queue, 0, 10);
      expect(queue.settle(batch, [REJECTED, AMBIGUOUS], context()).toPark).toEqual([]);
      expect(labels(take(queue, 100, 10))).toEqual(['a1']);
      expect(labels(take(queue, 100, 10))).toEqual(['b1']);
      expect(batch.map((e) => e.failures)).toEqual([0, 0]);
    });

    it('routes the messages of a parked lane to the park, in order, and holds the lane behind them', () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 1n, committedAtMs: 0, rows: [row('a', 'a1'), row('b', 'b1'), row('a', 'a2')] });
      const { publish, park } = queue.take(0, 10, (key) => key.endsWith('a'));
      expect(labels(publish)).toEqual(['b1']);
      expect(labels(park)).toEqual(['a1']);
      expect(park[0].parkReason).toBe('behind a parked message of its key');
    });
  });

  describe('settle', () => {
    // Defect F2: a later message of a key counted as delivered while an earlier one was refused.
    it("holds back a key's messages behind its first unconfirmed one, whatever the broker said about them", () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 1n, committedAtMs: 0, rows: [row('k', 'A'), row('k', 'B'), row('j', 'C')] });
      const settled = queue.settle(take(queue, 0, 10), [REJECTED, CONFIRMED, CONFIRMED], context());
      expect(labels(settled.done)).toEqual(['C']);
      expect(settled.heldBack).toBe(1);
      expect(queue.size).toBe(2);
      expect(labels(take(queue, 100, 10))).toEqual(['A']); // alone (failed in company), B behind it
    });

    it('parks a message after the park rule counts its own refusals', () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 1n, committedAtMs: 0, rows: [row('a', 'a1')] });
      let parked: QueuedMessage[] = [];
      for (let attempt = 1; attempt <= 3; attempt++) {
        parked = queue.settle(
          take(queue, attempt * 1_000, 1),
          [REJECTED],
          context({ now: attempt * 1_000 }),
        ).toPark;
      }
      expect(labels(parked)).toEqual(['a1']);
      expect(parked[0].parkReason).toMatch(/3 failure\(s\), the last REJECTED/);
      expect(queue.confirmable()).toBe(0n);
      queue.parked(parked);
      expect(queue.confirmable()).toBe(1n);
    });

    // Defect F1: an always-AMBIGUOUS message was never parked and held the position for ever.
    it('parks a message that is always AMBIGUOUS while the broker answers, after N tries or T ms', () => {
      const byCount = new PublishQueue(0n);
      byCount.add({ position: 1n, committedAtMs: 0, rows: [row('a', 'a1')] });
      let toPark: QueuedMessage[] = [];
      for (let attempt = 1; attempt <= 3; attempt++)
        toPark = byCount.settle(
          take(byCount, attempt * 1_000, 1),
          [AMBIGUOUS],
          context({ now: attempt * 1_000 }),
        ).toPark;
      expect(labels(toPark)).toEqual(['a1']);

      const byTime = new PublishQueue(0n);
      byTime.add({ position: 1n, committedAtMs: 0, rows: [row('a', 'a2')] });
      const rule = { afterFailures: 100, afterMs: 30_000 };
      expect(byTime.settle(take(byTime, 0, 1), [AMBIGUOUS], context({ park: rule })).toPark).toEqual([]);
      expect(
        labels(
          byTime.settle(take(byTime, 30_000, 1), [AMBIGUOUS], context({ now: 30_000, park: rule })).toPark,
        ),
      ).toEqual(['a2']);
    });

    it('counts no failure while the broker is down, however long', () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 1n, committedAtMs: 0, rows: [row('a', 'a1')] });
      for (let attempt = 1; attempt <= 10; attempt++) {
        const now = attempt * 100_000;
        const result = queue.settle(take(queue, now, 1), [AMBIGUOUS], context({ now, brokerUp: false }));
        expect(result.toPark).toEqual([]);
      }
    });

    it('backs off by the message attempts', () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 1n, committedAtMs: 0, rows: [row('a')] });
      const seen: number[] = [];
      const retryInMs = (attempts: number) => {
        seen.push(attempts);
        return 10;
      };
      queue.settle(take(queue, 0, 1), [AMBIGUOUS], context({ retryInMs }));
      queue.settle(take(queue, 10, 1), [AMBIGUOUS], context({ now: 10, retryInMs }));
      expect(seen).toEqual([1, 2]);
      expect(queue.nextRetryAt(10)).toBe(20);
    });

    it('hands a message whose parking failed back to the park, never to the broker', () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 1n, committedAtMs: 0, rows: [row('a', 'a1')] });
      const { park } = queue.take(0, 1, () => true);
      queue.parkingFailed(park, 50);
      const again = queue.take(50, 1);
      expect(again.publish).toEqual([]);
      expect(labels(again.park)).toEqual(['a1']);
    });
  });

  describe('confirmable', () => {
    it('moves to the end of the last unit before the first with a message not done, and forgets the units passed', () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 10n, committedAtMs: 1, rows: [row('a', 'a1')] });
      queue.add({ position: 20n, committedAtMs: 2, rows: [row('b', 'b1')] });
      queue.add({ position: 30n, committedAtMs: 3, rows: [row('c', 'c1')] });
      queue.settle(take(queue, 0, 10), [CONFIRMED, AMBIGUOUS, CONFIRMED], context());
      expect(queue.confirmable()).toBe(10n);
      expect(queue.retained).toBe(4); // units 20 and 30 with their messages, one of them done
      expect(queue.oldestPendingCommitMs()).toBe(2);
      queue.settle(take(queue, 100, 10), [CONFIRMED], context({ now: 100 }));
      expect(queue.confirmable()).toBe(30n);
      expect(queue.retained).toBe(0);
      expect(queue.oldestPendingCommitMs()).toBeUndefined();
    });
  });

  describe('idleUpTo', () => {
    it('moves on to a keepalive position only when nothing is held', () => {
      const queue = new PublishQueue(0n);
      queue.add({ position: 10n, committedAtMs: 0, rows: [row('a')] });
      queue.idleUpTo(50n);
      expect(queue.confirmable()).toBe(0n);
      queue.settle(take(queue, 0, 1), [CONFIRMED], context());
      queue.idleUpTo(50n);
      expect(queue.confirmable()).toBe(50n);
      queue.idleUpTo(40n);
      expect(queue.confirmable()).toBe(50n);
    });
  });

  /**
   * The publishing rules over random interleavings: units added (with or without messages), batches taken,
   * answered in any order (confirm, refuse, ambiguous; the broker up or down), parks that succeed or fail,
   * lanes parked from outside, time passing, keepalives; one key the broker never confirms. Checked at
   * settlement, not only at hand-out.
   */
  describe('any interleaving (property)', () => {
    type Step =
      | { kind: 'add'; keys: string[]; empty: boolean }
      | { kind: 'take'; max: number; parkLaneB: boolean }
      | { kind: 'answer'; which: number; outcomes: Array<'C' | 'R' | 'A'>; brokerUp: boolean }
      | { kind: 'park'; which: number; fails: boolean }
      | { kind: 'tick'; ms: number }
      | { kind: 'keepalive' };

    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({
        kind: fc.constant('add' as const),
        keys: fc.array(fc.constantFrom('a', 'b', 'c', 'never'), { maxLength: 3 }),
        empty: fc.boolean(),
      }),
      fc.record({
        kind: fc.constant('take' as const),
        max: fc.integer({ min: 1, max: 4 }),
        parkLaneB: fc.boolean(),
      }),
      fc.record({
        kind: fc.constant('answer' as const),
        which: fc.nat(),
        outcomes: fc.array(fc.constantFrom<'C' | 'R' | 'A'>('C', 'R', 'A'), { minLength: 4, maxLength: 4 }),
        brokerUp: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('park' as const), which: fc.nat(), fails: fc.boolean() }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 300 }) }),
      fc.constant({ kind: 'keepalive' as const }),
    );

    it('keeps each key in order at hand-out and at settlement, loses nothing, bounds what it holds, parks a key that never succeeds', () => {
      fc.assert(
        fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
          const queue = new PublishQueue(0n);
          const done = new Set<string>();
          const endOf = new Map<string, bigint>();
          const order = new Map<string, string[]>(); // key → its messages in source order
          const onWire: QueuedMessage[][] = [];
          const toPark: QueuedMessage[][] = [];
          const handedOut = new Set<string>();
          let units = 0;
          let position = 0n;
          let now = 0;
          let confirmed = 0n;

          const check = () => {
            const confirmable = queue.confirmable();
            expect(confirmable >= confirmed).toBe(true);
            confirmed = confirmable;
            for (const [label, end] of endOf) if (!done.has(label)) expect(confirmable < end).toBe(true);
            // What it holds is what it was given past the position: never more.
            const past = [...endOf.entries()].filter(([, end]) => end > confirmable).length;
            expect(queue.retained).toBeLessThanOrEqual(units + past);
          };
          const earlierOf = (label: string, key: string) => {
            const ofKey = order.get(key)!;
            return ofKey.slice(0, ofKey.indexOf(label));
          };
          const handOut = (batch: readonly QueuedMessage[]) => {
            batch.forEach((entry, i) => {
              const label = entry.row.messageId;
              expect(done.has(label)).toBe(false);
              expect(handedOut.has(label)).toBe(false);
              const inBatchBefore = new Set(batch.slice(0, i).map((e) => e.row.messageId));
              for (const before of earlierOf(label, entry.row.key))
                expect(done.has(before) || inBatchBefore.has(before)).toBe(true);
              handedOut.add(label);
            });
          };
          // At settlement: a message is done only once every earlier message of its key is.
          const settleDone = (batch: readonly QueuedMessage[]) =>
            batch.forEach((e) => {
              for (const before of earlierOf(e.row.messageId, e.row.key)) expect(done.has(before)).toBe(true);
              done.add(e.row.messageId);
              handedOut.delete(e.row.messageId);
            });
          const takeSome = (max: number, parkLaneB: boolean) => {
            const { publish, park } = queue.take(now, max, (key) => parkLaneB && key.endsWith('b'));
            handOut([...publish, ...park].sort((x, y) => (x.row.id < y.row.id ? -1 : 1)));
            if (publish.length > 0) onWire.push(publish);
            if (park.length > 0) toPark.push(park);
          };
          const answer = (batch: QueuedMessage[], outcomes: PublishOutcome[], brokerUp: boolean) => {
            const result = queue.settle(batch, outcomes, {
              now,
              brokerUp,
              retryInMs: (a) => a * 50,
              park: DEFAULT_PARK_RULE,
            });
            settleDone(result.done);
            batch.filter((e) => !result.done.includes(e)).forEach((e) => handedOut.delete(e.row.messageId));
            result.toPark.forEach((e) => handedOut.add(e.row.messageId));
            if (result.toPark.length > 0) toPark.push(result.toPark);
          };
          const outcomeOf = (entry: QueuedMessage, code: 'C' | 'R' | 'A'): PublishOutcome =>
            entry.row.key === 'never'
              ? AMBIGUOUS
              : code === 'C'
                ? CONFIRMED
                : code === 'R'
                  ? REJECTED
                  : AMBIGUOUS;

          for (const s of steps) {
            if (s.kind === 'add') {
              position += 10n;
              units += 1;
              const rows = s.empty ? [] : s.keys.map((key) => row(key));
              rows.forEach((r) => {
                endOf.set(r.messageId, position);
                order.set(r.key, [...(order.get(r.key) ?? []), r.messageId]);
              });
              queue.add({ position, committedAtMs: now, rows });
            } else if (s.kind === 'take') {
              takeSome(s.max, s.parkLaneB);
            } else if (s.kind === 'answer' && onWire.length > 0) {
              const batch = onWire.splice(s.which % onWire.length, 1)[0];
              answer(
                batch,
                batch.map((e, i) => outcomeOf(e, s.outcomes[i % 4])),
                s.brokerUp,
              );
            } else if (s.kind === 'park' && toPark.length > 0) {
              const batch = toPark.splice(s.which % toPark.length, 1)[0];
              if (s.fails) {
                queue.parkingFailed(batch, now + 10);
                batch.forEach((e) => handedOut.delete(e.row.messageId));
              } else {
                queue.parked(batch);
                settleDone(batch);
              }
            } else if (s.kind === 'tick') {
              now += s.ms;
            } else if (s.kind === 'keepalive' && onWire.length === 0 && toPark.length === 0) {
              queue.idleUpTo(position + 5n);
            }
            check();
          }

          // Then the broker answers everything but the key that never succeeds, and parking works: all done.
          for (const batch of onWire.splice(0))
            answer(
              batch,
              batch.map((e) => outcomeOf(e, 'C')),
              true,
            );
          for (let round = 0; round < 2_000 && queue.size > 0; round++) {
            now += 1_000;
            for (const batch of toPark.splice(0)) {
              queue.parked(batch);
              settleDone(batch);
            }
            const { publish, park } = queue.take(now, 4);
            handOut([...publish, ...park].sort((x, y) => (x.row.id < y.row.id ? -1 : 1)));
            if (park.length > 0) toPark.push(park);
            answer(
              publish,
              publish.map((e) => outcomeOf(e, 'C')),
              true,
            );
            check();
          }
          for (const batch of toPark.splice(0)) {
            queue.parked(batch);
            settleDone(batch);
          }
          // Nothing lost, nothing held, the position past everything: the key that never succeeds was parked.
          expect(queue.size).toBe(0);
          expect(done.size).toBe(endOf.size);
          expect(queue.retained).toBe(0);
          expect(queue.confirmable() >= position).toBe(true);
        }),
        { numRuns: Number(process.env.RELAY_PROPERTY_RUNS ?? 300) },
      );
    });
  });
});
