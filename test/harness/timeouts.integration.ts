// Integration suites talk to real brokers: a generous ceiling (each test still waits for conditions, not time).
jest.setTimeout(90_000);
