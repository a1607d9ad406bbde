import { RecordedRedriveAuditEntry } from '../../redrive/ledger/redrive-ledger.interface';
import { formatHistory, formatHistoryDetail, formatUnfinished } from './history-format';

const entry = (id: string, fields: Partial<RecordedRedriveAuditEntry>): RecordedRedriveAuditEntry => ({
  id,
  at: new Date('2026-12-06T10:00:00.000Z'),
  action: 'EXECUTE',
  actor: 'ops-alice',
  transport: 'rabbitmq',
  source: 'orders.billing.dlq',
  outcome: 'STARTED',
  ...fields,
});

describe('history format', () => {
  describe(formatHistory.name, () => {
    it('shows the overrides a run used in a column of their own, only when one did (issue 45, finding 11)', () => {
      const plain = formatHistory([entry('1', {})]);
      expect(plain.join('\n')).not.toContain('OVERRIDES');
      const lines = formatHistory([
        entry('1', {}),
        entry('2', { overrides: ['insecure-transport', 'rewrite-rights'] }),
      ]);
      expect(lines[0]).toMatch(/OUTCOME\s+OVERRIDES$/);
      expect(lines.at(-2)).toMatch(/STARTED\s+-$/);
      expect(lines.at(-1)).toMatch(/STARTED\s+insecure-transport, rewrite-rights$/);
    });
  });

  describe(formatUnfinished.name, () => {
    it('names an execution that STARTED with no outcome or refusal after it (issue 45)', () => {
      const lines = formatUnfinished([
        entry('1', { redriveId: 'r1' }),
        entry('2', { redriveId: 'r1', outcome: 'REDRIVEN' }),
        entry('3', { redriveId: 'r2' }),
        entry('4', { redriveId: 'r2', action: 'REFUSE', outcome: 'STALE_PLAN' }),
        entry('5', { redriveId: 'r3' }),
      ]);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('Execution r3 (entry 5, orders.billing.dlq) STARTED with no outcome');
    });
  });

  describe(formatHistoryDetail.name, () => {
    it('shows the login that wrote an entry and its approval’s evidence', () => {
      const text = formatHistoryDetail([
        entry('1', {
          dbUser: 'messaging_bob',
          evidence: { nonce: 'N', signature: 'S', approvedAt: 'A', expiresAt: 'E', keyId: 'sha256:k' },
        }),
      ]).join('\n');
      expect(text).toContain('messaging_bob');
      expect(text).toContain('nonce N, key sha256:k, keyring -, signed A, signature S');
    });
  });
});
