import { parseLsn } from './lsn';
import { WalMessageCollector } from './wal-message-collector';

const PREFIX = 'nest-reliable-messaging:messaging_outbox';
const hex = (text: string) =>
  [...Buffer.from(text)].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
const message = (xid: number, lsn: string, text: string, prefix = PREFIX) =>
  `rmgr: LogicalMessage len (rec/tot):     54/    54, tx:        ${xid}, lsn: ${lsn}, prev 0/01512998, ` +
  `desc: MESSAGE transactional, prefix "${prefix}"; payload (${Buffer.byteLength(text)} bytes): ${hex(text)}`;
const commit = (xid: number, lsn: string, extra = '') =>
  `rmgr: Transaction len (rec/tot):     46/    46, tx:        ${xid}, lsn: ${lsn}, prev 0/015129F0, ` +
  `desc: COMMIT 2026-12-02 19:08:06.371549 UTC${extra}`;
const abort = (xid: number, lsn: string) =>
  `rmgr: Transaction len (rec/tot):     46/    46, tx:        ${xid}, lsn: ${lsn}, prev 0/015129F0, ` +
  'desc: ABORT 2026-12-02 19:08:06.371549 UTC';

describe(WalMessageCollector.name, () => {
  const read = (lines: string[], from = '0/0', to = 'FF/0') => {
    const collector = new WalMessageCollector(PREFIX);
    lines.forEach((line) => collector.feed(line));
    return collector
      .transactions(parseLsn(from), parseLsn(to))
      .map((t) => ({ xid: t.xid, messages: t.messages.map((m) => m.toString()) }));
  };

  it('keeps committed transactions with their messages in order, in commit order', () => {
    expect(
      read([
        message(726, '0/01000010', 'a1'),
        message(727, '0/01000020', 'b1'),
        message(726, '0/01000030', 'a2\nwith a newline'),
        commit(727, '0/01000040'),
        commit(726, '0/01000050'),
      ]),
    ).toEqual([
      { xid: 727, messages: ['b1'] },
      { xid: 726, messages: ['a1', 'a2\nwith a newline'] },
    ]);
  });

  it('drops aborted transactions, other prefixes and records that are not messages', () => {
    expect(
      read([
        message(730, '0/01000010', 'rolled back'),
        abort(730, '0/01000020'),
        message(731, '0/01000030', 'not ours', 'someone-else'),
        commit(731, '0/01000040'),
        'pg_waldump: error: error in WAL record at 0/1512B40: invalid record length',
        '',
      ]),
    ).toEqual([]);
  });

  it("takes a committed subtransaction's messages with its parent", () => {
    expect(
      read([
        message(741, '0/01000010', 'in the savepoint'),
        message(740, '0/01000020', 'in the parent'),
        commit(740, '0/01000030', '; subxacts: 741'),
      ]),
    ).toEqual([{ xid: 740, messages: ['in the savepoint', 'in the parent'] }]);
  });

  it('keeps the commits in [from, to) only', () => {
    const lines = [
      message(1, '0/01000010', 'one'),
      commit(1, '0/01000020'),
      message(2, '0/01000030', 'two'),
      commit(2, '0/01000040'),
      message(3, '0/01000050', 'three'),
      commit(3, '0/01000060'),
    ];
    expect(read(lines, '0/01000021', '0/01000060').map((t) => t.xid)).toEqual([2]);
  });

  // claim: C-95
  it('follows a two-phase commit: the messages go with COMMIT_PREPARED, not with an abort', () => {
    const record = (xid: number, lsn: string, desc: string) =>
      `rmgr: Transaction len (rec/tot): 46/ 46, tx: ${xid}, lsn: ${lsn}, prev 0/01000010, desc: ${desc}`;
    const collector = new WalMessageCollector(PREFIX);
    [
      message(750, '0/01000010', 'prepared'),
      record(750, '0/01000020', 'PREPARE gid g1: 2026-12-02 19:28:23.486850 UTC'),
      message(751, '0/01000030', 'prepared, then rolled back'),
      record(751, '0/01000040', 'PREPARE gid g2: 2026-12-02 19:28:23.486850 UTC'),
      message(752, '0/01000050', 'prepared, still in doubt'),
      record(752, '0/01000060', 'PREPARE gid g3: 2026-12-02 19:28:23.486850 UTC'),
      record(0, '0/01000070', 'COMMIT_PREPARED 750: 2026-12-02 19:28:23.504751 UTC'),
      record(0, '0/01000080', 'ABORT_PREPARED 751: 2026-12-02 19:28:23.504751 UTC'),
    ].forEach((line) => collector.feed(line));
    expect(collector.transactions(0n, parseLsn('FF/0')).map((t) => t.messages.map(String))).toEqual([
      ['prepared'],
    ]);
    expect(collector.unsupported).toEqual([752]);
  });

  // Defect F5 (b): a record across the first scan's end was read by neither scan; the second scan now starts
  // at the last record the first one read, which it reads again: once counts.
  it('counts a record read by two scans once, and says where the last one read starts', () => {
    const collector = new WalMessageCollector(PREFIX);
    const first = [message(726, '0/01000010', 'a1'), message(726, '0/01000030', 'a2')];
    const second = [
      message(726, '0/01000030', 'a2'),
      message(726, '0/01FFFFF0', 'a3'),
      commit(726, '0/02000040'),
    ];
    first.forEach((line) => collector.feed(line));
    expect(collector.lastRecordStart).toBe(parseLsn('0/01000030'));
    second.forEach((line) => collector.feed(line));
    expect(
      collector.transactions(0n, parseLsn('FF/0')).map((t) => t.messages.map((m) => m.toString())),
    ).toEqual([['a1', 'a2', 'a3']]);
  });
});
