import { Lsn, parseLsn } from './lsn';

/** A committed transaction read back from the WAL, with this outbox's messages in it, in order. */
export interface RecoveredTransaction {
  /** Where its commit record starts. */
  readonly commitLsn: Lsn;
  readonly xid: number;
  /** The messages' content, as `pg_logical_emit_message` wrote it. */
  readonly messages: readonly Buffer[];
}

/** One record line of `pg_waldump`: resource manager, transaction, position, description. */
const RECORD =
  /^rmgr: (\w+)\s+len \(rec\/tot\):\s*\d+\/\s*\d+, tx:\s*(\d+), lsn: ([0-9A-Fa-f]+\/[0-9A-Fa-f]+), prev [0-9A-Fa-f/]+, desc: (.*)$/;
/** `MESSAGE transactional, prefix "…"; payload (N bytes): 68 69 …` (PostgreSQL 14+). */
const MESSAGE = /^MESSAGE transactional, prefix "(.*)"; payload \((\d+) bytes\):((?: [0-9A-Fa-f]{2})*)\s*$/;
const SUBXACTS = /subxacts:((?: \d+)+)/;

type Pending = Array<{ lsn: Lsn; content: Buffer }>;

/**
 * Reads `pg_waldump --rmgr=LogicalMessage --rmgr=Transaction` output (of one scan, or of several in log order,
 * each starting at or before where the one before stopped) and keeps the transactions that
 * committed this outbox's messages (`prefix`): the messages of a transaction and of its committed
 * subtransactions, in log order, once its COMMIT (or COMMIT_PREPARED) record is read; an ABORT drops them.
 */
export class WalMessageCollector {
  private readonly pending = new Map<number, Pending>();
  /** Prepared (two-phase) transactions with messages, waiting for COMMIT_PREPARED or ABORT_PREPARED. */
  private readonly prepared = new Map<number, Pending>();
  private readonly committed: RecoveredTransaction[] = [];

  /** Where the last record read starts: a later scan starts there again (it is read twice, counted once). */
  private last?: Lsn;

  /** The start of the last record read (of the resource managers read), or undefined before the first. */
  get lastRecordStart(): Lsn | undefined {
    return this.last;
  }

  /** Prepared transactions with our messages not committed or rolled back in what was read, by xid. */
  get unsupported(): number[] {
    return [...this.prepared.keys()];
  }

  constructor(private readonly prefix: string) {}

  /** One line of output; lines that are not records (errors, blank) are ignored. */
  feed(line: string): void {
    const record = RECORD.exec(line.trim());
    if (!record) return;
    const [, rmgr, xidText, lsnText, desc] = record;
    // A scan that starts again at the last record of the one before reads it twice: once counts.
    const at = parseLsn(lsnText);
    if (this.last !== undefined && at <= this.last) return;
    this.last = at;
    const xid = Number(xidText);
    if (rmgr === 'LogicalMessage') {
      const message = MESSAGE.exec(desc);
      if (!message || message[1] !== this.prefix) return;
      const content = Buffer.from(message[3].replace(/ /g, ''), 'hex');
      if (content.length !== Number(message[2])) return;
      this.pending.set(xid, [...(this.pending.get(xid) ?? []), { lsn: parseLsn(lsnText), content }]);
      return;
    }
    if (rmgr !== 'Transaction') return;
    const subxacts = (SUBXACTS.exec(desc)?.[1] ?? '').trim().split(/\s+/).filter(Boolean).map(Number);
    const xids = [xid, ...subxacts];
    // `COMMIT_PREPARED 727: …` / `ABORT_PREPARED 727: …` name the prepared transaction.
    const preparedXid = Number(/^(?:COMMIT|ABORT)_PREPARED (\d+):/.exec(desc)?.[1] ?? Number.NaN);
    if (desc.startsWith('COMMIT_PREPARED')) {
      this.commit(parseLsn(lsnText), preparedXid, this.prepared.get(preparedXid) ?? []);
      this.prepared.delete(preparedXid);
    } else if (desc.startsWith('ABORT_PREPARED')) {
      this.prepared.delete(preparedXid);
    } else if (desc.startsWith('COMMIT')) {
      this.commit(parseLsn(lsnText), xid, this.take(xids));
    } else if (desc.startsWith('ABORT')) {
      this.take(xids);
    } else if (desc.startsWith('PREPARE')) {
      const messages = this.take(xids);
      if (messages.length > 0) this.prepared.set(xid, messages);
    }
  }

  private take(xids: readonly number[]): Pending {
    const messages = xids.flatMap((id) => this.pending.get(id) ?? []);
    xids.forEach((id) => this.pending.delete(id));
    return messages.sort((a, b) => (a.lsn < b.lsn ? -1 : a.lsn > b.lsn ? 1 : 0));
  }

  private commit(commitLsn: Lsn, xid: number, messages: Pending): void {
    if (messages.length > 0)
      this.committed.push({ commitLsn, xid, messages: messages.map((m) => m.content) });
  }

  /** Transactions that committed at or after `from` and before `to`, in commit order. */
  transactions(from: Lsn, to: Lsn): RecoveredTransaction[] {
    return this.committed.filter((t) => t.commitLsn >= from && t.commitLsn < to);
  }
}
