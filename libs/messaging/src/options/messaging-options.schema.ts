import { z } from 'zod';
import type { MessagingModuleOptions } from '../messaging-options.interface';
import type { ClassificationRule } from '../retry/error-classifier';
import { RetryPolicyOptions } from '../retry/retry-policy.interface';
import { resolveRetryPolicy } from '../retry/retry-policy';
import { MESSAGING_DEFAULTS } from './messaging-defaults';
import { JOURNAL_MAX_AGE } from '../topology/messaging-topology';

const { kafka: KAFKA, rabbitmq: RABBITMQ } = MESSAGING_DEFAULTS.transport;
const { relay: RELAY, retention: RETENTION, consumers: CONSUMERS, tenants: TENANTS } = MESSAGING_DEFAULTS;

const HOST_PORT = /^[^\s:]+:\d{1,5}$/;
const positiveInt = (what: string) =>
  z
    .number({ error: `must be a number (${what})` })
    .int(`must be a whole number (${what})`)
    .positive(`must be > 0 (${what})`);
const name = z
  .string({ error: 'must be a string' })
  .regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be 1-100 letters, digits, ".", "_" or "-"');

const kafka = z.strictObject({
  kind: z.literal('kafka'),
  brokers: z
    .array(
      z
        .string()
        .regex(HOST_PORT, 'each broker must be host:port')
        .refine(
          (broker) => !HOST_PORT.test(broker) || validPort(broker.split(':')[1]),
          'the port must be 1-65535',
        ),
      { error: 'must be a list of host:port' },
    )
    .min(1, 'must name at least one broker (host:port)'),
  clientId: name.optional(),
  producerClient: z
    .enum(['kafkajs', 'platformatic'], { error: "must be 'kafkajs' or 'platformatic'" })
    .default(KAFKA.producerClient),
  sasl: z
    .strictObject({
      mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512'], {
        error: "must be 'plain', 'scram-sha-256' or 'scram-sha-512'",
      }),
      username: z.string().min(1, 'must not be empty'),
      password: z.string().min(1, 'must not be empty'),
    })
    .optional(),
  ssl: z.boolean().default(KAFKA.ssl),
  topics: z
    .strictObject({
      numPartitions: positiveInt('partitions of created topics').default(KAFKA.topics.numPartitions),
      replicationFactor: positiveInt('replicas of created topics').default(KAFKA.topics.replicationFactor),
    })
    .prefault({}),
  connectionTimeoutMs: positiveInt('ms').default(KAFKA.connectionTimeoutMs),
  sessionTimeoutMs: positiveInt('ms')
    .min(6_000, 'must be ≥ 6000 ms (the broker refuses less)')
    .default(KAFKA.sessionTimeoutMs),
});

const kafkaChecked = kafka.refine((k) => k.sasl?.mechanism !== 'plain' || k.ssl, {
  message: 'SASL plain sends the password as is: it needs ssl: true (or use scram-sha-512)',
  path: ['sasl', 'mechanism'],
});

const queueType = z.enum(['classic', 'quorum'], { error: "must be 'classic' or 'quorum'" });
const unhandledTypeAction = z.enum(['settle', 'dead-letter'], { error: "must be 'settle' or 'dead-letter'" });

const rabbitmq = z.strictObject({
  kind: z.literal('rabbitmq'),
  url: z
    .string({ error: 'must be an AMQP URL' })
    .regex(/^amqps?:\/\//, 'must start with amqp:// or amqps://'),
  prefetch: positiveInt('unacknowledged deliveries per consumer').default(RABBITMQ.prefetch),
  heartbeatSeconds: positiveInt('s').default(RABBITMQ.heartbeatSeconds),
  queueType: queueType.default(RABBITMQ.queueType),
  queueTypes: z.record(z.string(), queueType).default({}),
  journals: z
    .record(
      z.string(),
      z.strictObject({
        maxAge: z
          .string()
          .regex(JOURNAL_MAX_AGE, "must be a number and a unit (Y, M, D, h, m, s), e.g. '7D'")
          .optional(),
        maxLengthBytes: positiveInt('bytes').optional(),
      }),
    )
    .optional(),
});

/** Validates `MessagingModuleOptions` and fills in every default. */
export const messagingOptionsSchema = z.strictObject({
  serviceName: name,
  transport: z.discriminatedUnion('kind', [kafkaChecked, rabbitmq], {
    error: "must be { kind: 'kafka', brokers } or { kind: 'rabbitmq', url }",
  }),
  relay: z
    .strictObject({
      enabled: z.boolean().default(RELAY.enabled),
      mode: z
        .enum(['poll', 'logical', 'external'], { error: "must be 'poll', 'logical' or 'external'" })
        .default(RELAY.mode),
      slot: z
        .string({ error: 'must be a string' })
        .regex(
          /^[a-z0-9_]{1,63}$/,
          'must be 1-63 lower-case letters, digits or "_" (a replication slot name)',
        )
        .optional(),
      batchSize: positiveInt('rows per round trip').max(5_000, 'must be ≤ 5000').default(RELAY.batchSize),
      pollIntervalMs: positiveInt('ms').default(RELAY.pollIntervalMs),
      leaseMs: positiveInt('ms').min(1_000, 'must be ≥ 1000 ms').default(RELAY.leaseMs),
      notify: z.boolean().default(RELAY.notify),
      retryInitialDelayMs: positiveInt('ms').default(RELAY.retryInitialDelayMs),
      retryMaxDelayMs: positiveInt('ms').default(RELAY.retryMaxDelayMs),
    })
    .refine((r) => r.retryMaxDelayMs >= r.retryInitialDelayMs, {
      message: 'retryMaxDelayMs must be ≥ retryInitialDelayMs',
      path: ['retryMaxDelayMs'],
    })
    .prefault({}),
  retention: z
    .strictObject({
      sentRetentionMs: z.number().int().nonnegative('must be ≥ 0').default(RETENTION.sentRetentionMs),
      intervalMs: positiveInt('ms').default(RETENTION.intervalMs),
      batchSize: positiveInt('rows per statement').default(RETENTION.batchSize),
    })
    .prefault({}),
  consumers: z
    .strictObject({
      autoStart: z.boolean().default(CONSUMERS.autoStart),
      inboxRetentionMs: positiveInt('ms').default(CONSUMERS.inboxRetentionMs),
      concurrency: positiveInt('handlers at once').max(256, 'must be ≤ 256').default(CONSUMERS.concurrency),
      batchSize: positiveInt('messages per transaction')
        .max(500, 'must be ≤ 500')
        .default(CONSUMERS.batchSize),
      unhandledTypes: unhandledTypeAction.default(CONSUMERS.unhandledTypes),
      unhandledTypesByGroup: z.record(z.string(), unhandledTypeAction).default({}),
      versionHold: z
        .strictObject({
          windowMs: z
            .number({ error: 'must be a number (ms)' })
            .int('must be a whole number (ms)')
            .nonnegative('must be ≥ 0 (ms; 0 dead-letters at once)')
            .default(CONSUMERS.versionHold.windowMs),
          initialDelayMs: positiveInt('ms').default(CONSUMERS.versionHold.initialDelayMs),
          maxDelayMs: positiveInt('ms').default(CONSUMERS.versionHold.maxDelayMs),
          holdSchemaMismatches: z.boolean().default(CONSUMERS.versionHold.holdSchemaMismatches),
        })
        .refine((h) => h.maxDelayMs >= h.initialDelayMs, {
          message: 'maxDelayMs must be ≥ initialDelayMs',
          path: ['maxDelayMs'],
        })
        .prefault({}),
    })
    .prefault({}),
  retryDefaults: z
    .record(
      z.string(),
      z.custom<RetryPolicyOptions>(
        (v) => typeof v === 'object' && v !== null,
        'must be a retry policy object',
      ),
    )
    .superRefine((policies, ctx) => {
      for (const [destination, policy] of Object.entries(policies)) {
        try {
          resolveRetryPolicy(policy);
        } catch (error) {
          ctx.addIssue({ code: 'custom', path: [destination], message: (error as Error).message });
        }
      }
    })
    .default({}),
  classification: z
    .array(z.custom<ClassificationRule>((v) => typeof v === 'object' && v !== null))
    .default([]),
  deadLetter: z
    .strictObject({
      keySecret: z.string({ error: 'must be a string (base64 of at least 32 random bytes)' }).optional(),
      carryHeaders: z.array(z.string().min(1, 'must not be empty')).default([]),
    })
    .prefault({}),
  topology: z.enum(['declare', 'verify'], { error: "must be 'declare' or 'verify'" }).default('verify'),
  tenants: z
    .strictObject({
      signingSecret: z.string({ error: 'must be a string (base64 of at least 32 random bytes)' }),
      concurrentClaims: positiveInt('claims at once')
        .max(64, 'must be ≤ 64')
        .default(TENANTS.concurrentClaims),
      maxLabelledTenants: positiveInt('tenants')
        .max(1_000, 'must be ≤ 1000')
        .default(TENANTS.maxLabelledTenants),
      parkAfterMs: positiveInt('ms').min(100, 'must be ≥ 100').default(TENANTS.parkAfterMs),
    })
    .optional(),
});

function validPort(text: string | undefined): boolean {
  const port = Number(text);
  return Number.isInteger(port) && port >= 1 && port <= 65_535;
}

/** Compile-time check: the documented options interface and what the schema accepts are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const _interfaceMatchesSchema: Same<MessagingModuleOptions, z.input<typeof messagingOptionsSchema>> = true;
void _interfaceMatchesSchema;
