import { PlannedMessage, sealPlan } from '../../redrive/redrive-plan';
import { hasUnprintable } from '../../common/printable';
import { formatPlan, positionText } from './plan-format';

const message: PlannedMessage = {
  position: { kind: 'partition', partition: 1, offset: '42' },
  messageId: '0190a1b2-0000-7000-8000-000000000001',
  type: 'OrderPlaced',
  failureCategory: 'VALIDATION',
  failureCode: 'SCHEMA_MISMATCH',
  attempts: 1,
  originDestination: 'orders',
  lastFailureAt: null,
  redriveCount: 0,
  previousRedriveIds: [],
  fingerprint: 'sha256:00',
};

const plan = (messages: PlannedMessage[]) =>
  sealPlan({
    version: 2,
    transport: 'kafka',
    plannedBy: 'ops-alice',
    source: 'orders.billing.dlq',
    target: 'orders',
    group: 'billing',
    createdAt: '2026-01-01T10:00:00.000Z',
    depth: 5,
    messages,
  });

describe(formatPlan.name, () => {
  it('says what would move where, message by message, and that nothing changed', () => {
    const text = formatPlan(plan([message])).join('\n');
    expect(text).toContain(
      'Dry run on kafka: orders.billing.dlq -> orders (group billing), planned by ops-alice',
    );
    expect(text).toContain('1 of 5 waiting message(s) would be redriven. Nothing was changed.');
    expect(text).toMatch(
      /p1@42\s+0190a1b2-0000-7000-8000-000000000001\s+OrderPlaced\s+VALIDATION\/SCHEMA_MISMATCH\s+1\s+-/,
    );
    expect(text).not.toContain('Warning');
  });

  it('names the picked ids a selection did not find', () => {
    const picked = sealPlan({
      ...plan([message]),
      selection: { by: 'ids', messageIds: [message.messageId!, 'gone-1', 'gone-2'] },
      notFound: ['gone-1', 'gone-2'],
    });
    expect(formatPlan(picked)).toContain('Not found in orders.billing.dlq: gone-1, gone-2.');
  });

  it('says when the byte budget stopped the plan’s read: the plan covers only what it read (issue 45, 7)', () => {
    const cut = sealPlan({
      ...plan([message]),
      cutOff: { reason: 'byte-budget', budgetBytes: 16 * 1024 * 1024, notRead: 4 },
    });
    expect(formatPlan(cut)).toContain(
      '4 more not read: byte budget of 16 MiB reached; the plan covers only messages it read.',
    );
    expect(formatPlan(plan([message])).join('\n')).not.toContain('byte budget');
  });

  it('warns about messages redriven before: a redrive loop', () => {
    const looping = { ...message, redriveCount: 2, previousRedriveIds: ['r-1', 'r-2'] };
    const text = formatPlan(plan([looping])).join('\n');
    expect(text).toContain('Warning: 1 message(s) were redriven before and failed again (a redrive loop?)');
    expect(text).toContain('Earlier redrive ids: r-1, r-2.');
  });

  it('escapes control characters that come from the DLQ: nothing can rewrite the approver’s terminal', () => {
    const hostile = {
      ...message,
      messageId: 'id\u001b]0;pwned\u0007',
      type: 'Evil\u001b[2J',
      failureCode: 'C\r\nOK',
      previousRedriveIds: ['r-1\u001b[1A'],
      redriveCount: 1,
    };
    const text = formatPlan(plan([hostile])).join('\n');
    expect([...text].filter((c) => c !== '\n' && hasUnprintable(c))).toEqual([]);
    expect(text).toContain('Evil\\u{1b}[2J');
    expect(text).toContain('C\\u{d}\\u{a}OK');
    expect(text).toContain('r-1\\u{1b}[1A');
  });

  it('shows a queue position as #index', () => {
    expect(positionText({ kind: 'queue', index: 3 })).toBe('#3');
  });
});
