import { ClaimedOutboxRow } from '../outbox-row';
import { confirmedNothing, holdBackBehindFailures, keyOf, sortOutcomes as sortBy } from './batch-outcomes';

const sortOutcomes = (rows: ClaimedOutboxRow[], outcomes: Parameters<typeof sortBy>[1]) =>
  sortBy(rows, outcomes, keyOf);

function row(id: string, key: string, destination = 'd'): ClaimedOutboxRow {
  return {
    id,
    key,
    destination,
    messageId: `00000000-0000-7000-8000-00000000000${id}`,
    type: 'T',
    headers: {},
    payloadJson: '{}',
    occurredAt: new Date(0),
    createdAt: new Date(0),
    attempts: 0,
  };
}

describe('batch-outcomes', () => {
  describe(sortBy.name, () => {
    it('pairs each row with its outcome, in order', () => {
      const error = new Error('nack');
      const batch = sortOutcomes(
        [row('1', 'a'), row('2', 'b'), row('3', 'a')],
        [{ status: 'CONFIRMED' }, { status: 'REJECTED', error }, { status: 'CONFIRMED' }],
      );
      expect(batch.confirmed.map((r) => r.id)).toEqual(['1', '3']);
      expect(batch.unconfirmed).toEqual([{ item: row('2', 'b'), outcome: { status: 'REJECTED', error } }]);
      expect(batch.heldBack).toEqual([]);
    });

    // Marking row 3 sent let it count as delivered ahead of row 1, sent again later.
    it("holds back a key's rows behind its first unconfirmed one, whatever the broker said about them", () => {
      const error = new Error('nack');
      const ambiguous = new Error('channel closed');
      const batch = sortOutcomes(
        [row('1', 'a'), row('2', 'b'), row('3', 'a'), row('4', 'a'), row('5', 'b')],
        [
          { status: 'REJECTED', error },
          { status: 'CONFIRMED' },
          { status: 'CONFIRMED' },
          { status: 'AMBIGUOUS', error: ambiguous },
          { status: 'CONFIRMED' },
        ],
      );
      expect(batch.confirmed.map((r) => r.id)).toEqual(['2', '5']);
      expect(batch.unconfirmed.map(({ item }) => item.id)).toEqual(['1']);
      expect(batch.heldBack.map(({ item, outcome }) => [item.id, outcome.status])).toEqual([
        ['3', 'CONFIRMED'],
        ['4', 'AMBIGUOUS'],
      ]);
    });
  });

  describe(confirmedNothing.name, () => {
    const rejected = { status: 'REJECTED', error: new Error('nack') } as const;
    it('is true when the broker confirmed no message of the batch, held back or not', () => {
      expect(confirmedNothing(sortOutcomes([row('1', 'a'), row('2', 'a')], [rejected, rejected]))).toBe(true);
      expect(confirmedNothing(sortOutcomes([], []))).toBe(false);
    });

    it('is false when it confirmed one, even one held back behind a refusal', () => {
      const batch = sortOutcomes([row('1', 'a'), row('2', 'a')], [rejected, { status: 'CONFIRMED' }]);
      expect(batch.confirmed).toEqual([]);
      expect(confirmedNothing(batch)).toBe(false);
    });
  });

  describe(keyOf.name, () => {
    it("tells one destination's key from another destination's key of the same name", () => {
      expect(keyOf(row('1', 'k', 'x'))).not.toBe(keyOf(row('1', 'k', 'y')));
      expect(keyOf(row('1', 'k', 'x'))).toBe(keyOf(row('2', 'k', 'x')));
    });
  });

  describe(holdBackBehindFailures.name, () => {
    it('releases the rows whose key had an unconfirmed message and keeps the others in order', () => {
      const claimed = [row('4', 'a'), row('5', 'b'), row('6', 'a'), row('7', 'c')];
      const { publish, release } = holdBackBehindFailures(claimed, new Set([keyOf(row('0', 'a'))]));
      expect(publish.map((r) => r.id)).toEqual(['5', '7']);
      expect(release.map((r) => r.id)).toEqual(['4', '6']);
    });
  });
});
