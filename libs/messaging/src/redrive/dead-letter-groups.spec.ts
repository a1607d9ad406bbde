import { groupDeadLetters } from './dead-letter-groups';
import { InspectedDeadLetter } from './inspected-dead-letter';

function letter(code: string, type: string, first: string, last: string): InspectedDeadLetter {
  return {
    message: {
      position: { kind: 'queue', index: 0 },
      messageId: 'm',
      type,
      failureCategory: 'AUTHORIZATION',
      failureCode: code,
      attempts: 1,
      originDestination: 'orders',
      lastFailureAt: last,
      redriveCount: 0,
      previousRedriveIds: [],
      fingerprint: 'sha256:x',
    },
    firstFailureAt: first,
    headers: {},
  };
}

describe(groupDeadLetters.name, () => {
  it('groups by category and code with counts, first and last seen, largest first', () => {
    const groups = groupDeadLetters([
      letter('A/1', 'OrderPlaced', '2026-01-01T10:05:00Z', '2026-01-01T10:06:00Z'),
      letter('B/2', 'OrderPlaced', '2026-01-01T09:00:00Z', '2026-01-01T09:00:00Z'),
      letter('A/1', 'OrderPaid', '2026-01-01T10:01:00Z', '2026-01-01T10:09:00Z'),
    ]);
    expect(groups).toEqual([
      {
        category: 'AUTHORIZATION',
        code: 'A/1',
        count: 2,
        firstSeen: '2026-01-01T10:01:00Z',
        lastSeen: '2026-01-01T10:09:00Z',
        types: ['OrderPaid', 'OrderPlaced'],
      },
      {
        category: 'AUTHORIZATION',
        code: 'B/2',
        count: 1,
        firstSeen: '2026-01-01T09:00:00Z',
        lastSeen: '2026-01-01T09:00:00Z',
        types: ['OrderPlaced'],
      },
    ]);
  });
});
