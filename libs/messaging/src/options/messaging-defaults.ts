/**
 * Every default of `MessagingModuleOptions`, in the options' own shape: the schema fills them in from here,
 * and a unit spec holds the "Default …" in each option's documentation to these values.
 */
export const MESSAGING_DEFAULTS = {
  transport: {
    kafka: {
      topics: { numPartitions: 3, replicationFactor: 1 },
      connectionTimeoutMs: 3_000,
      sessionTimeoutMs: 30_000,
      ssl: false,
      producerClient: 'kafkajs',
    },
    rabbitmq: { prefetch: 256, heartbeatSeconds: 10, queueType: 'classic' },
  },
  relay: {
    enabled: true,
    mode: 'poll',
    batchSize: 200,
    pollIntervalMs: 10_000,
    leaseMs: 30_000,
    notify: false,
    retryInitialDelayMs: 200,
    retryMaxDelayMs: 2_000,
  },
  retention: { sentRetentionMs: 86_400_000, intervalMs: 60_000, batchSize: 1_000 },
  consumers: {
    autoStart: true,
    inboxRetentionMs: 604_800_000,
    concurrency: 4,
    batchSize: 50,
    unhandledTypes: 'settle',
    versionHold: {
      windowMs: 1_500_000,
      initialDelayMs: 1_000,
      maxDelayMs: 60_000,
      holdSchemaMismatches: false,
    },
  },
  tenants: { concurrentClaims: 4, maxLabelledTenants: 50, parkAfterMs: 5_000 },
} as const;
