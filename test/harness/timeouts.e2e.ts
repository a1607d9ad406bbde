// End-to-end suites start processes and brokers.
jest.setTimeout(240_000);
