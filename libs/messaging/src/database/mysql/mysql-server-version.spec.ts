import { mysqlServerProblem } from './mysql-server-version';

describe('mysql-server-version', () => {
  describe(mysqlServerProblem.name, () => {
    it.each([
      '10.6.0-MariaDB',
      '10.11.19-MariaDB-0+deb12u1',
      '11.4.2-MariaDB-log',
      '8.0.4',
      '8.0.36',
      '8.4.3',
      '9.1.0',
    ])('accepts %p', (version) => {
      expect(mysqlServerProblem(version)).toBeUndefined();
    });

    // claim: C-11
    it('refuses MariaDB before 10.6 (no SKIP LOCKED), naming the version and what to use', () => {
      expect(mysqlServerProblem('10.5.26-MariaDB')).toMatch(
        /MariaDB 10\.5\.26 .*SKIP LOCKED.*MariaDB 10\.6 or later/,
      );
    });

    // claim: C-10
    it('refuses MySQL before 8.0.4 (no JSON_TABLE) and 5.7', () => {
      expect(mysqlServerProblem('8.0.3-rc')).toMatch(/MySQL 8\.0\.3 .*MySQL 8\.0\.4 or later/);
      expect(mysqlServerProblem('5.7.44-log')).toMatch(/MySQL 5\.7\.44/);
    });

    it('says so when the version cannot be read', () => {
      expect(mysqlServerProblem('unknown')).toMatch(/could not be read/);
    });
  });
});
