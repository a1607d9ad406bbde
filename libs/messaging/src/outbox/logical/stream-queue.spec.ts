import * as fc from 'fast-check';
import { CONFIRMED, PublishOutcome } from '../../transports/publish-outcome';
import { NewOutboxRow } from '../outbox-row';
import { SettlePolicy, StreamEntry, StreamQueue } from './stream-queue';

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

function policy(overrides: Partial<SettlePolicy> = {}): SettlePolicy {
  return { now: 0, retryInMs: () => 100, countRefusals: true, parkAfterRefusals: 3, ...overrides };
}

const labels = (batch: readonly StreamEntry[]) => batch.map((e) => e.row.messageId);

describe(StreamQueue.name, () => {
  describe('add', () => {
    it('moves the confirmable position over a transaction without messages of ours', () => {
      const queue = new StreamQueue(10n);
      queue.add({ endLsn: 20n, commitTimeMs: 0, rows: [] });
      expect(queue.confirmable()).toBe(20n);
    });

    it('holds the position before a transaction whose messages are not done', () => {
      const queue = new StreamQueue(10n);
      queue.add({ endLsn: 20n, commitTimeMs: 0, rows: [row('a')] });
      queue.add({ endLsn: 30n, commitTimeMs: 0, rows: [] });
      expect(queue.confirmable()).toBe(10n);
      expect(queue.size).toBe(1);
    });
  });

  describe('take', () => {
    it('hands out messages in stream order, at most max', () => {
      const queue = new StreamQueue(0n);
      queue.add({ endLsn: 1n, commitTimeMs: 0, rows: [row('a', 'a1'), row('b', 'b1')] });
      queue.add({ endLsn: 2n, commitTimeMs: 0, rows: [row('a', 'a2')] });
      expect(labels(queue.take(0, 2))).toEqual(['a1', 'b1']);
      expect(labels(queue.take(0, 2))).toEqual([]); // a2 waits behind a1, on the wire
    });

    it('keeps a key behind its message that waits for a retry, and lets other keys go', () => {
      const queue = new StreamQueue(0n);
      queue.add({ endLsn: 1n, commitTimeMs: 0, rows: [row('a', 'a1')] });
      queue.add({ endLsn: 2n, commitTimeMs: 0, rows: [row('a', 'a2'), row('b', 'b1')] });
      const first = queue.take(0, 1);
      queue.settle(first, [AMBIGUOUS], policy());
      expect(labels(queue.take(50, 10))).toEqual(['b1']);
      expect(labels(queue.take(100, 10))).toEqual(['a1', 'a2']);
    });

    it('sends a message refused in company alone next time, and counts its refusals only then', () => {
      const queue = new StreamQueue(0n);
      queue.add({ endLsn: 1n, commitTimeMs: 0, rows: [row('a', 'a1'), row('b', 'b1')] });
      const batch = queue.take(0, 10);
      expect(queue.settle(batch, [REJECTED, REJECTED], policy()).toPark).toEqual([]);
      expect(labels(queue.take(100, 10))).toEqual(['a1']);
      expect(labels(queue.take(100, 10))).toEqual(['b1']);
      expect(batch.map((e) => e.refusals)).toEqual([0, 0]);
    });
  });

  describe('settle', () => {
    it('parks a message after parkAfterRefusals refusals of it alone', () => {
      const queue = new StreamQueue(0n);
      queue.add({ endLsn: 1n, commitTimeMs: 0, rows: [row('a', 'a1')] });
      let parked: StreamEntry[] = [];
      for (let attempt = 1; attempt <= 3; attempt++) {
        parked = queue.settle(
          queue.take(attempt * 1_000, 1),
          [REJECTED],
          policy({ now: attempt * 1_000 }),
        ).toPark;
      }
      expect(labels(parked)).toEqual(['a1']);
      expect(queue.confirmable()).toBe(0n);
      queue.parked(parked);
      expect(queue.confirmable()).toBe(1n);
    });

    it('does not count refusals while the broker is down', () => {
      const queue = new StreamQueue(0n);
      queue.add({ endLsn: 1n, commitTimeMs: 0, rows: [row('a', 'a1')] });
      for (let attempt = 1; attempt <= 10; attempt++) {
        const result = queue.settle(queue.take(attempt * 1_000, 1), [REJECTED], {
          ...policy({ now: attempt * 1_000 }),
          countRefusals: false,
        });
        expect(result.toPark).toEqual([]);
      }
    });

    it('backs off by the message attempts', () => {
      const queue = new StreamQueue(0n);
      queue.add({ endLsn: 1n, commitTimeMs: 0, rows: [row('a')] });
      const seen: number[] = [];
      const retryInMs = (attempts: number) => {
        seen.push(attempts);
        return 10;
      };
      queue.settle(queue.take(0, 1), [AMBIGUOUS], policy({ retryInMs }));
      queue.settle(queue.take(10, 1), [AMBIGUOUS], policy({ now: 10, retryInMs }));
      expect(seen).toEqual([1, 2]);
      expect(queue.nextRetryAt(10)).toBe(20);
    });
  });

  describe('confirmable', () => {
    it('moves to the end of the last transaction before the first with a message not done', () => {
      const queue = new StreamQueue(0n);
      queue.add({ endLsn: 10n, commitTimeMs: 1, rows: [row('a', 'a1')] });
      queue.add({ endLsn: 20n, commitTimeMs: 2, rows: [row('b', 'b1')] });
      queue.add({ endLsn: 30n, commitTimeMs: 3, rows: [row('c', 'c1')] });
      const batch = queue.take(0, 10);
      queue.settle(batch, [CONFIRMED, AMBIGUOUS, CONFIRMED], policy());
      expect(queue.confirmable()).toBe(10n);
      expect(queue.oldestPendingCommitMs()).toBe(2);
      queue.settle(queue.take(100, 10), [CONFIRMED], policy({ now: 100 }));
      expect(queue.confirmable()).toBe(30n);
      expect(queue.oldestPendingCommitMs()).toBeUndefined();
    });
  });

  describe('idleUpTo', () => {
    it('moves on to a keepalive position only when nothing is pending', () => {
      const queue = new StreamQueue(0n);
      queue.add({ endLsn: 10n, commitTimeMs: 0, rows: [row('a')] });
      queue.idleUpTo(50n);
      expect(queue.confirmable()).toBe(0n);
      queue.settle(queue.take(0, 1), [CONFIRMED], policy());
      queue.idleUpTo(50n);
      expect(queue.confirmable()).toBe(50n);
      queue.idleUpTo(40n);
      expect(queue.confirmable()).toBe(50n);
    });
  });

  describe('any interleaving (property)', () => {
    type Step =
      | { kind: 'add'; keys: string[]; empty: boolean }
      | { kind: 'take'; max: number }
      | { kind: 'answer'; which: number; outcomes: Array<'C' | 'R' | 'A'>; brokerUp: boolean }
      | { kind: 'park'; which: number; fails: boolean }
      | { kind: 'divert'; which: number }
      | { kind: 'tick'; ms: number }
      | { kind: 'keepalive' };

    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({
        kind: fc.constant('add' as const),
        keys: fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }),
        empty: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('take' as const), max: fc.integer({ min: 1, max: 4 }) }),
      fc.record({
        kind: fc.constant('answer' as const),
        which: fc.nat(),
        outcomes: fc.array(fc.constantFrom<'C' | 'R' | 'A'>('C', 'R', 'A'), { minLength: 4, maxLength: 4 }),
        brokerUp: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('park' as const), which: fc.nat(), fails: fc.boolean() }),
      fc.record({ kind: fc.constant('divert' as const), which: fc.nat() }),
      fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 300 }) }),
      fc.constant({ kind: 'keepalive' as const }),
    );

    it('keeps each key in order, never confirms past a message not done, and delivers everything', () => {
      fc.assert(
        fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
          const queue = new StreamQueue(0n);
          const done = new Set<string>();
          const endOf = new Map<string, bigint>();
          const order = new Map<string, string[]>(); // key → its messages in stream order
          const onWire: StreamEntry[][] = [];
          const toPark: StreamEntry[][] = [];
          const handedOut = new Set<string>();
          let lsn = 0n;
          let now = 0;
          let confirmed = 0n;

          const check = () => {
            const position = queue.confirmable();
            expect(position >= confirmed).toBe(true);
            confirmed = position;
            for (const [label, end] of endOf) if (!done.has(label)) expect(position < end).toBe(true);
          };
          const handOut = (batch: StreamEntry[]) => {
            batch.forEach((entry, i) => {
              const label = entry.row.messageId;
              expect(done.has(label)).toBe(false);
              expect(handedOut.has(label)).toBe(false);
              const ofKey = order.get(entry.row.key)!;
              const earlier = ofKey.slice(0, ofKey.indexOf(label));
              const inBatchBefore = new Set(batch.slice(0, i).map((e) => e.row.messageId));
              for (const before of earlier) expect(done.has(before) || inBatchBefore.has(before)).toBe(true);
              handedOut.add(label);
            });
          };
          const settleDone = (batch: readonly StreamEntry[]) =>
            batch.forEach((e) => {
              done.add(e.row.messageId);
              handedOut.delete(e.row.messageId);
            });

          for (const s of steps) {
            if (s.kind === 'add') {
              lsn += 10n;
              const rows = s.empty ? [] : s.keys.map((key) => row(key));
              rows.forEach((r) => {
                endOf.set(r.messageId, lsn);
                order.set(r.key, [...(order.get(r.key) ?? []), r.messageId]);
              });
              queue.add({ endLsn: lsn, commitTimeMs: now, rows });
            } else if (s.kind === 'take') {
              const batch = queue.take(now, s.max);
              handOut(batch);
              if (batch.length > 0) onWire.push(batch);
            } else if (s.kind === 'answer' && onWire.length > 0) {
              const batch = onWire.splice(s.which % onWire.length, 1)[0];
              const outcomes = batch.map((_, i) =>
                s.outcomes[i % 4] === 'C' ? CONFIRMED : s.outcomes[i % 4] === 'R' ? REJECTED : AMBIGUOUS,
              );
              const result = queue.settle(batch, outcomes, {
                now,
                retryInMs: (attempts) => attempts * 50,
                countRefusals: s.brokerUp,
                parkAfterRefusals: 2,
              });
              settleDone(batch.filter((_, i) => outcomes[i].status === 'CONFIRMED'));
              batch
                .filter((_, i) => outcomes[i].status !== 'CONFIRMED')
                .forEach((e) => handedOut.delete(e.row.messageId));
              result.toPark.forEach((e) => handedOut.add(e.row.messageId));
              if (result.toPark.length > 0) toPark.push(result.toPark);
            } else if (s.kind === 'divert' && onWire.length > 0) {
              const batch = onWire.splice(s.which % onWire.length, 1)[0];
              queue.divert(batch);
              toPark.push(batch);
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
              queue.idleUpTo(lsn + 5n);
            }
            check();
          }

          // Then the broker confirms everything and every parking succeeds: all done, everything confirmed.
          onWire.forEach((batch) => {
            queue.settle(
              batch,
              batch.map(() => CONFIRMED),
              policy({ now }),
            );
            settleDone(batch);
          });
          toPark.forEach((batch) => {
            queue.parked(batch);
            settleDone(batch);
          });
          for (let round = 0; round < 1_000 && queue.size > 0; round++) {
            now += 1_000;
            const batch = queue.take(now, 4);
            handOut(batch);
            queue.settle(
              batch,
              batch.map(() => CONFIRMED),
              policy({ now }),
            );
            settleDone(batch);
            check();
          }
          expect(queue.size).toBe(0);
          expect(done.size).toBe(endOf.size);
          expect(
            queue.confirmable() >=
              (endOf.size > 0 ? [...endOf.values()].reduce((a, b) => (a > b ? a : b)) : 0n),
          ).toBe(true);
        }),
        { numRuns: 300 },
      );
    });
  });
});
