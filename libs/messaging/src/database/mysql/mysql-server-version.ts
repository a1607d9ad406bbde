/** The oldest servers with `SELECT … FOR UPDATE SKIP LOCKED` and `JSON_TABLE`, which the library's SQL uses. */
export const MIN_MARIADB = [10, 6] as const;
export const MIN_MYSQL = [8, 0, 4] as const;

/**
 * What keeps a server of this `version()` from running the library, or undefined when it can: MariaDB
 * 10.6+, MySQL 8.0.4+.
 */
export function mysqlServerProblem(version: string): string | undefined {
  const numbers = (/^(\d+)\.(\d+)\.(\d+)/.exec(version) ?? []).slice(1).map(Number);
  if (numbers.length !== 3) return `its version '${version}' could not be read`;
  const mariadb = /mariadb/i.test(version);
  const minimum = mariadb ? MIN_MARIADB : MIN_MYSQL;
  if (!atLeast(numbers, minimum)) {
    const product = mariadb ? 'MariaDB' : 'MySQL';
    return (
      `${product} ${numbers.join('.')} lacks SELECT … FOR UPDATE SKIP LOCKED or JSON_TABLE, which the relay needs: ` +
      `use ${product} ${minimum.join('.')} or later`
    );
  }
  return undefined;
}

function atLeast(version: readonly number[], minimum: readonly number[]): boolean {
  for (let i = 0; i < minimum.length; i++) {
    if (version[i] !== minimum[i]) return version[i] > minimum[i];
  }
  return true;
}
