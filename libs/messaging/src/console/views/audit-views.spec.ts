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
    // Issue 45 finding 7: a tab left on ?verify=all must not recompute the whole chain every 30 s.
    it('refreshes itself after a check of the latest entries, never after a check of the whole log', () => {
      const refreshing = { ...context, refreshSeconds: 30 };
      const head = { id: '9', hash: 'sha256:h' };
      const latest = chainNotice(refreshing, { intact: true, checked: 9, head }, false);
      expect(auditPage(refreshing, [entry], {}, latest)).toContain('data-refresh="30"');
      const whole = chainNotice(refreshing, { intact: true, checked: 9, head }, true);
      expect(auditPage(refreshing, [entry], {}, whole, {}, true)).not.toContain('data-refresh');
    });

    it('shows the overrides an entry records beside its outcome (issue 45, findings 11 and 13)', () => {
      const overridden = { ...entry, overrides: ['insecure-transport', 'rewrite-rights'] as const };
      const intact = chainNotice(context, { intact: true, checked: 1 }, false);
      expect(auditPage(context, [overridden], {}, intact)).toContain(
        '<strong>(override: insecure-transport, rewrite-rights)</strong>',
      );
      expect(auditPage(context, [entry], {}, intact)).not.toContain('override:');
    });

    it('says where the hash chain is broken, above the entries', () => {
      const broken = chainNotice(
        context,
        {
          intact: false,
          checked: 3,
          brokenAt: '7',
          reason: 'its fields no longer give its hash',
          breaks: [{ entry: '7', reason: 'its fields no longer give its hash' }],
        },
        false,
      );
      const text = auditPage(context, [entry], {}, broken);
      expect(text).toContain('hash chain is broken in one place');
      expect(text).toContain('Entry 7: its fields no longer give its hash.');
      expect(text.indexOf('chain-broken')).toBeLessThan(text.indexOf('aria-label="Audit log"'));
    });

    it('lists every break of the chain, not only the first (issue 45 item 2)', () => {
      const breaks = [
        { entry: '3', reason: 'its fields no longer give its hash' },
        { entry: '9', reason: 'it does not follow the entry before it' },
        { entry: 'head', reason: 'the head holds another hash' },
      ];
      const check = { intact: false as const, checked: 12, brokenAt: '3', reason: breaks[0].reason, breaks };
      const text = chainNotice(context, check, true).__html;
      expect(text).toContain('broken in 3 places');
      expect(text).toContain('Entry 3: its fields no longer give its hash.');
      expect(text).toContain('Entry 9: it does not follow the entry before it.');
      expect(text).toContain('The head: the head holds another hash.');
      const many = Array.from({ length: 25 }, (_, i) => ({ entry: String(i + 1), reason: 'changed' }));
      const long = chainNotice(context, { ...check, breaks: many }, true).__html;
      expect(long).toContain('Entry 20: changed.');
      expect(long).not.toContain('Entry 21:');
      expect(long).toContain('And 5 more');
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
