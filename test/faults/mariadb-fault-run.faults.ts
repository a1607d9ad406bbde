import { faultRunSuite } from './support/fault-run-suite';

// The short form once on MariaDB (issue 18): the same run, with both services' tables, outbox and inbox on a
// private MariaDB server, which is shut down or killed mid-run instead of PostgreSQL.
faultRunSuite('rabbitmq', 'mariadb');
