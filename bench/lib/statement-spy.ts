import { Client } from 'pg';

type Query = (...args: unknown[]) => unknown;

/**
 * Counts the statements this process sends, per database, by wrapping pg's `Client.prototype.query` (every
 * TypeORM and pg call goes through it): the client-side cross-check of PostgreSQL's own counts. BEGIN and
 * COMMIT count as statements here, while PostgreSQL counts the transaction once.
 */
export class StatementSpy {
  private readonly counts = new Map<string, number>();
  private original?: Query;

  start(): this {
    const proto = Client.prototype as unknown as { query: Query };
    const original = proto.query;
    this.original = original;
    const counts = this.counts;
    proto.query = function (this: Client, ...args: unknown[]): unknown {
      const database = (this as unknown as { database?: string }).database ?? '?';
      counts.set(database, (counts.get(database) ?? 0) + 1);
      return original.apply(this, args);
    };
    return this;
  }

  count(database: string): number {
    return this.counts.get(database) ?? 0;
  }

  stop(): void {
    if (this.original) (Client.prototype as unknown as { query: Query }).query = this.original;
    this.original = undefined;
  }
}
