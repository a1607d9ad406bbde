import { createTestSchema, TestSchema } from '../../harness/postgres';

describe('PostgreSQL (smoke)', () => {
  let schema: TestSchema;

  beforeAll(async () => {
    schema = await createTestSchema('smoke_pg');
  });

  afterAll(async () => {
    await schema.drop();
  });

  it('runs queries in an isolated schema of the suite', async () => {
    const client = await schema.connect();
    await client.query('create table probe (id serial primary key, note text not null)');
    await client.query("insert into probe (note) values ('hello'), ('world')");
    const { rows } = await client.query<{ note: string }>('select note from probe order by id');
    expect(rows.map((r) => r.note)).toEqual(['hello', 'world']);

    const { rows: where } = await client.query<{ schema: string }>(
      "select table_schema as schema from information_schema.tables where table_name = 'probe'",
    );
    expect(where).toEqual([{ schema: schema.name }]);
  });
});
