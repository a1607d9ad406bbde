import { DataSource } from 'typeorm';
import { PostgresRedriveLedger } from './postgres-redrive-ledger';

/**
 * Issue 45 finding 14: PostgreSQL refuses U+0000 in `jsonb` and `text`, so an audit entry naming a DLQ
 * message whose id holds one failed, and that message could never be planned, redriven or discarded. The
 * ledger writes each NUL as `\u{0}`; other characters are kept as they are.
 */
describe('PostgresRedriveLedger.record: NUL in message ids', () => {
  it('writes a NUL in a message id or the detail as \\u{0}, so PostgreSQL accepts the entry', async () => {
    const queries: { sql: string; params: unknown[] }[] = [];
    const dataSource = {
      options: {},
      query: (sql: string, params: unknown[]) => {
        queries.push({ sql, params });
        return Promise.resolve([]);
      },
    } as unknown as DataSource;
    const ledger = Reflect.construct(PostgresRedriveLedger, [dataSource]) as PostgresRedriveLedger;
    await ledger.record({
      action: 'PLAN',
      actor: 'ops',
      transport: 'rabbitmq',
      source: 'orders.billing.dlq',
      messageIds: ['a\u0000b', null, 'tab\there', '\u0000', 'x\\u{0}'],
      outcome: 'PLANNED',
      detail: 'id a\u0000b',
    });
    expect(queries).toHaveLength(1);
    const params = queries[0].params;
    const stored = params.filter((p): p is string => typeof p === 'string');
    for (const text of stored) expect(text).not.toContain('\u0000');
    // What PostgreSQL refuses in jsonb is the JSON escape of U+0000.
    for (const text of stored) expect(text).not.toContain('\\u0000');
    // A backslash that starts \u{ is written \u{5c}, so the text reads back exactly (common/postgres-text).
    expect(JSON.parse(params[8] as string)).toEqual([
      'a\\u{0}b',
      null,
      'tab\there',
      '\\u{0}',
      'x\\u{5c}u{0}',
    ]);
    expect(params[10]).toBe('id a\\u{0}b');
  });
});
