import { Client } from 'pg';
import { openClient } from './databases';
import { now, sleep } from './time';

/**
 * Reads what PostgreSQL itself counted for a database: committed plus rolled-back transactions
 * (`pg_stat_database`). Every relay claim is one autocommit statement, so one transaction. Read from a
 * session on another database, so that reading does not count; backends report their counts when they go
 * idle (at most about a second later), which `verify()` measures.
 */
export class XactCounter {
  private constructor(private readonly client: Client) {}

  /** `serverUrl`: a database other than the counted ones (the server's default database). */
  static async open(serverUrl: string): Promise<XactCounter> {
    return new XactCounter(await openClient(serverUrl));
  }

  async read(database: string): Promise<number> {
    // Each autocommit select is a transaction of its own: a fresh statistics snapshot.
    const { rows } = await this.client.query<{ n: string }>(
      'select xact_commit + xact_rollback as n from pg_stat_database where datname = $1',
      [database],
    );
    return Number(rows[0]?.n ?? Number.NaN);
  }

  /**
   * Sends `statements` autocommit statements to `databaseUrl` (named `database`) and waits until the counter
   * shows them: the method's check against a known number. The session connects first (its start is a
   * transaction too) and disconnects after the statements, which makes its backend report at once; a backend
   * that stays connected reports when it goes idle, at most 10 s later when it reported less than 1 s before.
   */
  async verify(
    database: string,
    databaseUrl: string,
    statements: number,
  ): Promise<{ sent: number; counted: number; delayMs: number }> {
    const probe = await openClient(databaseUrl);
    const before = await this.settled(database);
    const sentAt = now();
    try {
      for (let i = 0; i < statements; i++) await probe.query('select 1');
    } finally {
      await probe.end();
    }
    let counted = (await this.read(database)) - before;
    while (counted < statements && now() - sentAt < 15_000) {
      await sleep(50);
      counted = (await this.read(database)) - before;
    }
    const delayMs = now() - sentAt;
    await sleep(500); // anything more would show by now
    return { sent: statements, counted: (await this.read(database)) - before, delayMs };
  }

  /**
   * The counter `waitMs` from now: a backend that reported less than a second before it went idle reports
   * the rest up to 10 s later, so after 11 s everything done before this call is counted (a relay's
   * safety poll keeps the counter from ever standing still for that long).
   */
  async after(database: string, waitMs: number): Promise<number> {
    await sleep(waitMs);
    return this.read(database);
  }

  /** The counter once it stopped moving for a second (connections just opened report their setup). */
  async settled(database: string): Promise<number> {
    let last = await this.read(database);
    for (;;) {
      await sleep(1_000);
      const current = await this.read(database);
      if (current === last) return current;
      last = current;
    }
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
