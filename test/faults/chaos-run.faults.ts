import { isChaos } from './support/fault-profile';
import { faultRunSuite } from './support/fault-run-suite';
import { Transport } from './support/fault-stack';
import { TestDialect } from '../harness/test-database';

// Issue 26's chaos mode: the fault run with the services' broker and database links behind fault proxies,
// which lose answers, cut, delay and black-hole them among the kills and restarts. `npm test` runs the short
// form on two of the four broker × database pairs; `npm run test:faults -- --chaos` runs the long form on all.
const PAIRS: ReadonlyArray<readonly [Transport, TestDialect]> = isChaos()
  ? [
      ['kafka', 'postgres'],
      ['rabbitmq', 'mariadb'],
      ['kafka', 'mariadb'],
      ['rabbitmq', 'postgres'],
    ]
  : [
      ['kafka', 'mariadb'],
      ['rabbitmq', 'postgres'],
    ];

for (const [transport, dialect] of PAIRS) faultRunSuite(transport, dialect, { chaos: true });
