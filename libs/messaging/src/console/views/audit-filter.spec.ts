import { auditFilterOf, auditPageOf } from './audit-filter';

const entries = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => ({
    id: String(from + i),
    at: new Date(0),
    action: 'PLAN' as const,
    actor: 'alice',
    transport: 'rabbitmq' as const,
    outcome: 'PLANNED',
  }));
const ids = (page: ReturnType<typeof auditPageOf>) => page.entries.map((e) => Number(e.id));

describe(auditPageOf.name, () => {
  it('the latest page: drops the extra (oldest) entry, links older only', () => {
    const page = auditPageOf(entries(50, 60), {}, 10);
    expect(ids(page)).toEqual([51, 52, 53, 54, 55, 56, 57, 58, 59, 60]);
    expect(page.paging).toEqual({ older: '51', newer: undefined });
  });

  it('going back: links newer always, older while there are more', () => {
    expect(auditPageOf(entries(30, 40), { before: '51' }, 10).paging).toEqual({ older: '31', newer: '40' });
    expect(auditPageOf(entries(1, 5), { before: '6' }, 10).paging).toEqual({ older: undefined, newer: '5' });
  });

  it('coming forward: drops the extra (newest) entry, links newer while there are more', () => {
    const page = auditPageOf(entries(41, 51), { after: '40' }, 10);
    expect(ids(page)).toEqual([41, 42, 43, 44, 45, 46, 47, 48, 49, 50]);
    expect(page.paging).toEqual({ older: '41', newer: '50' });
    expect(auditPageOf(entries(51, 55), { after: '50' }, 10).paging).toEqual({
      older: '51',
      newer: undefined,
    });
  });

  it('an empty page links nowhere', () => {
    expect(auditPageOf([], { before: '3' }, 10)).toEqual({ entries: [], paging: {} });
  });
});

describe(auditFilterOf.name, () => {
  it('reads a typed local time as UTC, keeps ISO with a zone, and leaves out what is not a time or action', () => {
    const { filter, query } = auditFilterOf({
      actor: ' bob ',
      action: 'DROP',
      from: '2026-12-03T07:00',
      to: '2026-12-03T09:00:00+02:00',
    });
    expect(filter).toEqual({
      source: undefined,
      actor: 'bob',
      action: undefined,
      from: '2026-12-03T07:00',
      to: '2026-12-03T09:00:00+02:00',
    });
    expect(query.from?.toISOString()).toBe('2026-12-03T07:00:00.000Z');
    expect(query.to?.toISOString()).toBe('2026-12-03T07:00:00.000Z');
    expect(auditFilterOf({ from: 'yesterday' }).query.from).toBeUndefined();
  });
});
