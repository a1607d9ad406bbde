import { PlannedMessage, RedrivePlan } from '../../redrive/redrive-plan';
import { ConsolePlan } from '../plans/console-plan';
import { redrivePlanPage } from './redrive-views';

const context = { base: '/console', user: { name: 'jane', roles: ['approver' as const] }, csrfToken: 't' };

const message = (messageId: string, type: string): PlannedMessage => ({
  position: { kind: 'queue', index: 0 },
  messageId,
  type,
  failureCategory: 'PERMANENT',
  failureCode: 'X\u200d',
  attempts: 3,
  originDestination: 'orders.billing',
  lastFailureAt: null,
  redriveCount: 0,
  previousRedriveIds: [],
  fingerprint: 'f',
});

const plan: RedrivePlan = {
  version: 2,
  transport: 'rabbitmq',
  plannedBy: 'carol',
  source: 'orders.billing.dlq',
  target: 'orders.billing',
  group: 'billing',
  createdAt: '2026-12-06T10:00:00.000Z',
  depth: 1,
  messages: [message('0190\u202e1000-evil', 'OrderPlaced\u200b')],
  hash: 'sha256:x',
};

describe(redrivePlanPage.name, () => {
  // Issue 45 finding 13: what an approver reads on the plan page is what is there.
  // claim: C-80
  it('shows bidi and zero-width characters from the DLQ as visible escapes', () => {
    const entry: ConsolePlan = { id: 'p1', plan, refusals: {} };
    const page = redrivePlanPage(context, entry, { kind: 'waiting' }, { approve: true, execute: false });
    expect(page).toContain('OrderPlaced\\u{200b}');
    expect(page).toContain('0190\\u{202e}1000-evil');
    expect(page).toContain('PERMANENT/X\\u{200d}');
    for (const c of ['\u200b', '\u200d', '\u202e']) expect(page).not.toContain(c);
  });

  it('says when the byte budget stopped the plan’s read: the plan covers only what it read', () => {
    const cutOff = { reason: 'byte-budget' as const, budgetBytes: 16 * 1024 * 1024, notRead: 7 };
    const entry: ConsolePlan = { id: 'p1', plan: { ...plan, cutOff }, refusals: {} };
    const page = redrivePlanPage(context, entry, { kind: 'waiting' }, { approve: true, execute: false });
    expect(page).toContain(
      '7 more not read: byte budget of 16 MiB reached: the plan covers only the messages read',
    );
  });
});
