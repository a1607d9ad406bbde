import { Client } from 'pg';

type Query = (...args: unknown[]) => unknown;

/** Statements counted per kind (`statementKind`), in one process. */
export type StatementCounts = Record<string, number>;

/**
 * What a statement is, from its text: the relay's claim, mark, release…, the writer's business and outbox
 * inserts, the consumer's inbox record and handler insert, and the transaction control around them
 * (BEGIN and COMMIT are statements here; PostgreSQL counts their transaction once).
 */
export function statementKind(sql: string): string {
  const text = sql.trim().replace(/\s+/g, ' ');
  const rules: Array<[RegExp, string]> = [
    [/^(begin|start transaction)\b/i, 'begin'],
    [/^commit\b/i, 'commit'],
    [/^rollback to\b|^savepoint\b|^release savepoint\b/i, 'savepoint'],
    [/^rollback\b/i, 'rollback'],
    [/^with sent as\b/i, 'relay: claim (marks the batch before)'],
    [/^with due as\b/i, 'relay: move due scheduled'],
    [/^(update \S+ set sent_at = now\(\)|delete from \S+ where id = any)/i, 'relay: mark sent'],
    [
      /^select pg_try_advisory_xact_lock|^delete from \S*messaging_outbox where id in/i,
      'writer: outbox retention',
    ],
    [/^update \S+ o set attempts = o\.attempts \+ 1/i, 'relay: mark failed'],
    [/^update \S+ set locked_by = null/i, 'relay: release'],
    [/min\(case when locked_until > now\(\)/i, 'relay: next held row'],
    [/^select pg_notify/i, 'writer: notify'],
    [/^insert into \S*bench_orders/i, 'writer: business insert'],
    [/^insert into \S*outbox/i, 'writer: outbox insert'],
    [/^with input as .* insert into \S*inbox/i, 'consumer: inbox record'],
    [/^insert into \S*bench_handled/i, 'consumer: handler insert'],
    [/^delete from \S*messaging_(inbox|attempts)\b/i, 'consumer: inbox retention'],
  ];
  for (const [pattern, kind] of rules) if (pattern.test(text)) return kind;
  return `other: ${text.slice(0, 60)}`;
}

/**
 * Counts the statements this process sends to one database, by kind, by wrapping pg's
 * `Client.prototype.query` (every TypeORM and pg call goes through it). Another database's statements (the
 * bench's own reads of the server's statistics) are not counted.
 */
export class StatementCensus {
  private counts: StatementCounts = {};
  private original?: Query;

  constructor(private readonly database: () => string | undefined) {}

  start(): this {
    if (this.original) return this;
    const proto = Client.prototype as unknown as { query: Query };
    const original = proto.query;
    this.original = original;
    const counted = this.database;
    const add = (kind: string) => this.add(kind);
    proto.query = function (this: Client, ...args: unknown[]): unknown {
      const database = (this as unknown as { database?: string }).database;
      if (database !== undefined && database === counted()) {
        const [first] = args;
        const sql = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
        if (typeof sql === 'string') add(statementKind(sql));
      }
      return original.apply(this, args);
    };
    return this;
  }

  /** The counts since the last `take` (or `start`), and a fresh count from now. */
  take(): StatementCounts {
    const counts = this.counts;
    this.counts = {};
    return counts;
  }

  stop(): void {
    if (this.original) (Client.prototype as unknown as { query: Query }).query = this.original;
    this.original = undefined;
  }

  private add(kind: string): void {
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
  }
}
