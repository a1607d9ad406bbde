import { auditPage, chainNotice } from './audit-views';

const context = { base: '/console', user: { name: 'victor', roles: ['viewer' as const] }, csrfToken: 't' };
const entry = {
  id: '7',
  at: new Date('2026-01-01T10:00:00.000Z'),
  action: 'PLAN' as const,
  actor: 'ops-alice',
  transport: 'kafka' as const,
  outcome: 'PLANNED',
};

describe('access views', () => {
  describe(auditPage.name, () => {
    it('says where the hash chain is broken, above the entries', () => {
      const broken = chainNotice(
        context,
        { intact: false, checked: 3, brokenAt: '7', reason: 'its fields no longer give its hash' },
        false,
      );
      const text = auditPage(context, [entry], {}, broken);
      expect(text).toContain('hash chain is broken at entry 7: its fields no longer give its hash');
      expect(text.indexOf('chain-broken')).toBeLessThan(text.indexOf('aria-label="Audit log"'));
    });

    it('says the chain is intact for the entries checked, and links to a check of the whole log', () => {
      const head = { id: '7', hash: `sha256:${'ab'.repeat(32)}` };
      const latest = auditPage(
        context,
        [entry],
        {},
        chainNotice(context, { intact: true, checked: 1, head }, false),
      );
      expect(latest).toContain('Hash chain intact for the latest 1 entries');
      expect(latest).toContain('href="/console/audit?verify=all"');
      const whole = chainNotice(context, { intact: true, checked: 9, head }, true).__html;
      expect(whole).toContain('all 9 entries');
      expect(whole).not.toContain('verify=all');
    });
  });
});
