import type { DataSource } from 'typeorm';
import { postgresTables, quoteIdent } from './postgres-tables';

/** Only what postgresTables reads of a DataSource. */
function dataSource(schema?: string): DataSource {
  return { options: { type: 'postgres', schema } } as unknown as DataSource;
}

describe('postgres-tables', () => {
  describe(postgresTables.name, () => {
    it('qualifies both tables with the quoted schema of the DataSource', () => {
      expect(postgresTables(dataSource('messaging'))).toEqual({
        outbox: '"messaging".messaging_outbox',
        inbox: '"messaging".messaging_inbox',
        attempts: '"messaging".messaging_attempts',
        scheduled: '"messaging".messaging_outbox_scheduled',
        parked: '"messaging".messaging_parked',
        schema: 'messaging',
      });
    });

    it('leaves the names unqualified without a schema (the search_path decides)', () => {
      expect(postgresTables(dataSource())).toEqual({
        outbox: 'messaging_outbox',
        inbox: 'messaging_inbox',
        attempts: 'messaging_attempts',
        scheduled: 'messaging_outbox_scheduled',
        parked: 'messaging_parked',
        schema: undefined,
      });
    });

    it('treats an empty schema as none', () => {
      expect(postgresTables(dataSource(''))).toMatchObject({
        outbox: 'messaging_outbox',
        inbox: 'messaging_inbox',
      });
    });

    it('keeps the case of a mixed-case schema by quoting it', () => {
      expect(postgresTables(dataSource('Blog')).outbox).toBe('"Blog".messaging_outbox');
    });

    it('doubles quotes in the schema name', () => {
      expect(postgresTables(dataSource('my"schema')).inbox).toBe('"my""schema".messaging_inbox');
    });

    it('keeps a schema with a dot as one identifier', () => {
      expect(postgresTables(dataSource('a.b')).outbox).toBe('"a.b".messaging_outbox');
    });
  });

  describe(quoteIdent.name, () => {
    it.each([
      ['public', '"public"'],
      ['Mixed', '"Mixed"'],
      ['with space', '"with space"'],
      ['a"b', '"a""b"'],
      ['""', '""""""'],
      ['x"; DROP TABLE t; --', '"x""; DROP TABLE t; --"'],
      ['', '""'],
    ])('quotes %p as %p', (name, quoted) => {
      expect(quoteIdent(name)).toBe(quoted);
    });
  });
});
