import { QueryRunner } from 'typeorm';

/** A table name for a migration's SQL: in the DataSource's schema when it has one (`DATABASE_SCHEMA`). */
export function qualifiedTable(queryRunner: QueryRunner, table: string): string {
  const schema = (queryRunner.connection.options as { schema?: string }).schema;
  return schema ? `"${schema}"."${table}"` : `"${table}"`;
}
