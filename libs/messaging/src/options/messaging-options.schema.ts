import { z } from 'zod';
import { RetryPolicyOptions } from '../retry/retry-policy.interface';
import { resolveRetryPolicy } from '../retry/retry-policy';

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
  sasl: z
    .strictObject({
      mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512'], {
        error: "must be 'plain', 'scram-sha-256' or 'scram-sha-512'",
      }),
      username: z.string().min(1, 'must not be empty'),
      password: z.string().min(1, 'must not be empty'),
    })
    .optional(),
  ssl: z.boolean().default(false),
  topics: z
    .strictObject({
      numPartitions: positiveInt('partitions of created topics').default(3),
      replicationFactor: positiveInt('replicas of created topics').default(1),
    })
    .prefault({}),
  connectionTimeoutMs: positiveInt('ms').default(3_000),
  sessionTimeoutMs: positiveInt('ms')
    .min(6_000, 'must be ≥ 6000 ms (the broker refuses less)')
    .default(30_000),
});

const kafkaChecked = kafka.refine((k) => k.sasl?.mechanism !== 'plain' || k.ssl, {
  message: 'SASL plain sends the password as is: it needs ssl: true (or use scram-sha-512)',
  path: ['sasl', 'mechanism'],
});

const rabbitmq = z.strictObject({
  kind: z.literal('rabbitmq'),
  url: z
    .string({ error: 'must be an AMQP URL' })
    .regex(/^amqps?:\/\//, 'must start with amqp:// or amqps://'),
  prefetch: positiveInt('unacknowledged deliveries per consumer').default(32),
  heartbeatSeconds: positiveInt('s').default(10),
});

/** Validates `MessagingModuleOptions` and fills in every default. */
export const messagingOptionsSchema = z.strictObject({
  serviceName: name,
  transport: z.discriminatedUnion('kind', [kafkaChecked, rabbitmq], {
    error: "must be { kind: 'kafka', brokers } or { kind: 'rabbitmq', url }",
  }),
  relay: z
    .strictObject({
      enabled: z.boolean().default(true),
      batchSize: positiveInt('rows per round trip').max(5_000, 'must be ≤ 5000').default(200),
      pollIntervalMs: positiveInt('ms').default(10_000),
      leaseMs: positiveInt('ms').min(1_000, 'must be ≥ 1000 ms').default(30_000),
      notify: z.boolean().default(false),
      retryInitialDelayMs: positiveInt('ms').default(200),
      retryMaxDelayMs: positiveInt('ms').default(5_000),
    })
    .refine((r) => r.retryMaxDelayMs >= r.retryInitialDelayMs, {
      message: 'retryMaxDelayMs must be ≥ retryInitialDelayMs',
      path: ['retryMaxDelayMs'],
    })
    .prefault({}),
  retention: z
    .strictObject({
      sentRetentionMs: z.number().int().nonnegative('must be ≥ 0').default(86_400_000),
      intervalMs: positiveInt('ms').default(60_000),
      batchSize: positiveInt('rows per statement').default(1_000),
    })
    .prefault({}),
  consumers: z
    .strictObject({
      autoStart: z.boolean().default(true),
      inboxRetentionMs: positiveInt('ms').default(604_800_000),
      concurrency: positiveInt('handlers at once').max(256, 'must be ≤ 256').default(4),
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
  classification: z.array(z.custom<object>((v) => typeof v === 'object' && v !== null)).default([]),
  deadLetter: z
    .strictObject({
      keySecret: z.string({ error: 'must be a string (base64 of at least 32 random bytes)' }).optional(),
      carryHeaders: z.array(z.string().min(1, 'must not be empty')).default([]),
    })
    .prefault({}),
  topology: z.enum(['declare', 'verify'], { error: "must be 'declare' or 'verify'" }).default('verify'),
});

function validPort(text: string | undefined): boolean {
  const port = Number(text);
  return Number.isInteger(port) && port >= 1 && port <= 65_535;
}
