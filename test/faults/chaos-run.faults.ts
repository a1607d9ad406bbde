import { isChaos } from './support/fault-profile';
import { faultRunSuite } from './support/fault-run-suite';
import { RunRelay, Transport } from './support/fault-stack';
import { TestDialect } from '../harness/test-database';

// Issue 26's chaos mode: the fault run with the services' broker and database links behind fault proxies,
// which lose answers, cut, delay and black-hole them among the kills and restarts. `npm test` runs the short
// form on two broker × database pairs, one of them with the logical relay (issue 38; its PostgreSQL link then
// carries the replication connection, whose status updates a lost answer may take); `npm run test:faults --
// --chaos` runs the long form on all four pairs with the polling relay and both PostgreSQL pairs with the
// logical one.
const PAIRS: ReadonlyArray<readonly [Transport, TestDialect, RunRelay]> = isChaos()
  ? [
      ['kafka', 'postgres', 'poll'],
      ['rabbitmq', 'mariadb', 'poll'],
      ['kafka', 'mariadb', 'poll'],
      ['rabbitmq', 'postgres', 'poll'],
      ['kafka', 'postgres', 'logical'],
      ['rabbitmq', 'postgres', 'logical'],
    ]
  : [
      ['kafka', 'mariadb', 'poll'],
      ['rabbitmq', 'postgres', 'logical'],
    ];

for (const [transport, dialect, relay] of PAIRS) faultRunSuite(transport, dialect, { chaos: true, relay });
