import { InvalidEnvironmentError } from '../config/invalid-environment.error';

/** PostgreSQL's code for "database does not exist". */
const UNDEFINED_DATABASE = '3D000';
/** PostgreSQL's code for "schema does not exist". */
const UNDEFINED_SCHEMA = '3F000';

/** MySQL's and MariaDB's code for "unknown database". */
const BAD_DATABASE = 'ER_BAD_DB_ERROR';

/** Database errors that waiting does not cure: a service fails at once instead of retrying to connect. */
export const PERMANENT_DATABASE_ERRORS: readonly string[] = [
  UNDEFINED_DATABASE,
  UNDEFINED_SCHEMA,
  BAD_DATABASE,
];

/** A one-paragraph reason a service could not start, with the fix when we know it. */
export function explainStartupFailure(service: string, error: unknown): string {
  if (error instanceof InvalidEnvironmentError) return error.message;
  const message = error instanceof Error ? error.message : String(error);
  if ((error as { code?: unknown } | undefined)?.code === UNDEFINED_DATABASE) {
    return (
      `${service} cannot start: ${message}. Create it (e.g. \`createdb -h 127.0.0.1 -U postgres <name>\`), ` +
      'point DATABASE_URL at an existing database, or start the service with `npm run start:post` / ' +
      '`npm run start:subscribe`, which create it.'
    );
  }
  if ((error as { code?: unknown } | undefined)?.code === BAD_DATABASE) {
    return (
      `${service} cannot start: ${message}. Create it (e.g. \`mysql -h 127.0.0.1 -u root -e 'create database ` +
      "<name>'`), point DATABASE_URL at an existing database, or start the service with " +
      '`npm run start:post -- --database mariadb` / `npm run start:subscribe -- --database mariadb`, which create it.'
    );
  }
  if ((error as { code?: unknown } | undefined)?.code === UNDEFINED_SCHEMA) {
    return (
      `${service} cannot start: ${message}. DATABASE_SCHEMA must name an existing schema: create it ` +
      '(`create schema <name>`) or unset DATABASE_SCHEMA to use `public`.'
    );
  }
  return `${service} cannot start: ${error instanceof Error && error.stack ? error.stack : message}`;
}
