import { AUDIT_CHAIN_GENESIS, auditRowHash, ChainedAuditRow, checkAuditChain } from './audit-chain';

function chain(count: number): ChainedAuditRow[] {
  const rows: ChainedAuditRow[] = [];
  let previous = AUDIT_CHAIN_GENESIS;
  for (let i = 1; i <= count; i++) {
    const fields = {
      id: String(i),
      at: new Date(Date.UTC(2026, 0, 1, 10, 0, i)),
      action: 'PLAN',
      actor: i % 2 === 0 ? 'ops-alice' : 'Jürgen',
      transport: 'kafka',
      source: 'orders.billing.dlq',
      target: i === 2 ? null : 'orders',
      planHash: null,
      approver: null,
      redriveId: null,
      messageIds: ['0190a1b2-0000-7000-8000-000000000001', null, 'a,b'],
      outcome: 'PLANNED',
      detail: `${i} of 3 waiting`,
    };
    const rowHash = auditRowHash(previous, fields);
    rows.push({ ...fields, prevHash: previous, rowHash });
    previous = rowHash;
  }
  return rows;
}

describe(checkAuditChain.name, () => {
  it('passes a chain as written, whole or as a window, and names its head', () => {
    const rows = chain(4);
    const head = { id: '4', hash: rows[3].rowHash! };
    expect(checkAuditChain(rows, AUDIT_CHAIN_GENESIS, head)).toEqual({ intact: true, checked: 4, head });
    expect(checkAuditChain(rows.slice(2), undefined, head)).toMatchObject({ intact: true, checked: 2 });
  });

  it('finds a changed entry, a removed one, a reordered pair, and entries removed from the end', () => {
    const rows = chain(4);
    const head = { id: '4', hash: rows[3].rowHash! };
    const changed = rows.map((r) => (r.id === '2' ? { ...r, detail: 'nothing to see' } : r));
    expect(checkAuditChain(changed, AUDIT_CHAIN_GENESIS, head)).toMatchObject({
      intact: false,
      brokenAt: '2',
    });
    const backdated = rows.map((r) => (r.id === '3' ? { ...r, at: new Date(0) } : r));
    expect(checkAuditChain(backdated, AUDIT_CHAIN_GENESIS, head)).toMatchObject({ brokenAt: '3' });
    const removed = rows.filter((r) => r.id !== '2');
    expect(checkAuditChain(removed, AUDIT_CHAIN_GENESIS, head)).toMatchObject({
      brokenAt: '3',
      reason: expect.stringContaining('does not follow') as unknown,
    });
    expect(checkAuditChain([rows[1], rows[0], ...rows.slice(2)], AUDIT_CHAIN_GENESIS, head)).toMatchObject({
      brokenAt: '2',
    });
    expect(checkAuditChain(rows.slice(0, 3), AUDIT_CHAIN_GENESIS, head)).toMatchObject({ brokenAt: 'head' });
    const unhashed = rows.map((r) => (r.id === '4' ? { ...r, rowHash: null } : r));
    expect(checkAuditChain(unhashed, AUDIT_CHAIN_GENESIS, head)).toMatchObject({ brokenAt: '4' });
  });

  it('reports every break, not only the first: two separate changes are two breaks (issue 45 item 2)', () => {
    const rows = chain(6);
    const head = { id: '6', hash: rows[5].rowHash! };
    const twice = rows.map((r) =>
      r.id === '2' ? { ...r, approver: 'mallory' } : r.id === '5' ? { ...r, actor: 'mallory' } : r,
    );
    const check = checkAuditChain(twice, AUDIT_CHAIN_GENESIS, head);
    expect(check).toMatchObject({ intact: false, checked: 6, brokenAt: '2' });
    expect(!check.intact && check.breaks.map((b) => b.entry)).toEqual(['2', '5']);
    // A removed entry and an edit after it; entries missing from the end too.
    const mixed = twice.filter((r) => r.id !== '3').slice(0, 4);
    const found = checkAuditChain(mixed, AUDIT_CHAIN_GENESIS, head);
    expect(!found.intact && found.breaks.map((b) => b.entry)).toEqual(['2', '4', '5', 'head']);
  });

  it('hashes each field with its length: moving text from one field into the next changes the hash', () => {
    const [row] = chain(1);
    const moved = { ...row, actor: `${row.actor}orders`, source: '.billing.dlq' };
    expect(auditRowHash(AUDIT_CHAIN_GENESIS, moved)).not.toBe(row.rowHash);
    expect(auditRowHash(AUDIT_CHAIN_GENESIS, { ...row, messageIds: ['a', 'b', null] })).not.toBe(
      auditRowHash(AUDIT_CHAIN_GENESIS, { ...row, messageIds: ['a,b', null] }),
    );
  });

  it('hashes evidence and login when either is set; an entry with neither keeps its earlier hash (issue 45)', () => {
    const [row] = chain(1);
    const plain = auditRowHash(AUDIT_CHAIN_GENESIS, row);
    expect(auditRowHash(AUDIT_CHAIN_GENESIS, { ...row, evidence: null, dbUser: null })).toBe(plain);
    const stamped = { ...row, evidence: '{"nonce":"n","signature":"s"}', dbUser: 'messaging_jane' };
    const hash = auditRowHash(AUDIT_CHAIN_GENESIS, stamped);
    expect(hash).not.toBe(plain);
    for (const changed of [
      { ...stamped, evidence: '{"nonce":"n","signature":"forged"}' },
      { ...stamped, dbUser: 'messaging_bob' },
      { ...stamped, evidence: null },
      { ...stamped, dbUser: null },
    ]) {
      expect(auditRowHash(AUDIT_CHAIN_GENESIS, changed)).not.toBe(hash);
    }
  });

  it('hashes the overrides a run used when set; an entry without keeps its hash (issue 45, findings 11, 13)', () => {
    const [row] = chain(1);
    const stamped = { ...row, evidence: null, dbUser: 'messaging_jane' };
    const plain = auditRowHash(AUDIT_CHAIN_GENESIS, stamped);
    expect(auditRowHash(AUDIT_CHAIN_GENESIS, { ...stamped, overrides: null })).toBe(plain);
    const overridden = auditRowHash(AUDIT_CHAIN_GENESIS, { ...stamped, overrides: 'insecure-transport' });
    expect(overridden).not.toBe(plain);
    expect(
      auditRowHash(AUDIT_CHAIN_GENESIS, { ...stamped, overrides: 'insecure-transport,rewrite-rights' }),
    ).not.toBe(overridden);
  });
});
