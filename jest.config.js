/**
 * `npm test` runs every project: unit (pure logic, no I/O), integration (real PostgreSQL, MariaDB,
 * Kafka and RabbitMQ through test/harness), e2e (the demo apps as processes, driven over HTTP), faults (the apps
 * under load while processes, brokers and PostgreSQL fail; bad input), cluster (three-node brokers of its own,
 * a leader killed under load; also alone with `npm run test:cluster`) and compat.
 * Type checking is `npm run typecheck`; tests transpile only, which keeps them fast.
 */
const base = {
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: {
    '^@app/contracts(|/.*)$': '<rootDir>/libs/contracts/src$1',
    '^@app/service-kit(|/.*)$': '<rootDir>/libs/service-kit/src$1',
  },
  testEnvironment: 'node',
};

const withServices = {
  ...base,
  globalSetup: '<rootDir>/test/harness/global-setup.ts',
  globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
};

module.exports = {
  // Three workers by default (`npm test`: most suites wait on brokers, processes and faults, not on the two
  // cores); the long suites start first (see the sequencer).
  testSequencer: '<rootDir>/jest.sequencer.js',
  // Jest's own output, then the slowest suites (where the run's minutes went).
  reporters: ['default', '<rootDir>/jest.slowest-reporter.js'],
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/libs/**/*.spec.ts',
        '<rootDir>/apps/**/*.spec.ts',
        '<rootDir>/tools/**/*.spec.ts',
        '<rootDir>/bench/**/*.spec.ts',
      ],
    },
    {
      ...withServices,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/harness/timeouts.integration.ts'],
    },
    {
      ...withServices,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.e2e.ts'],
      // The shared setup, plus one build of both services for the run (the suites start them as processes).
      globalSetup: '<rootDir>/test/e2e/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/e2e/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/harness/timeouts.e2e.ts'],
    },
    {
      ...withServices,
      displayName: 'faults',
      // Issue 8: the services under load while faults are injected, and bad input. The short form runs here;
      // the soak with `npm run test:faults -- --soak`. Same build of the services as e2e (one per run).
      testMatch: ['<rootDir>/test/faults/**/*.faults.ts'],
      globalSetup: '<rootDir>/test/e2e/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/e2e/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/harness/timeouts.e2e.ts'],
    },
    {
      ...withServices,
      displayName: 'cluster',
      // Issue 19: the services on three-node Kafka and RabbitMQ clusters while a leader node is killed.
      testMatch: ['<rootDir>/test/cluster/**/*.cluster.ts'],
      globalSetup: '<rootDir>/test/e2e/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/e2e/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/harness/timeouts.e2e.ts'],
    },
    {
      ...withServices,
      displayName: 'compat',
      // Issue 13: the packed library in fresh `nest new` apps on each cell's Node, Nest and TypeORM.
      testMatch: ['<rootDir>/test/compat/**/*.compat.ts'],
    },
  ],
};
