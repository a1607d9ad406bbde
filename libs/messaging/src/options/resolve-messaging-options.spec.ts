import { FailureCategory } from '../errors/failure-category';
import { InvalidMessagingOptionsError, OptionIssue } from '../errors/invalid-messaging-options.error';
import { MessagingModuleOptions } from '../messaging-options.interface';
import { ErrorClassifier } from '../retry/error-classifier';
import { resolveRetryPolicy } from '../retry/retry-policy';
import { RetryMode, RetryOrdering } from '../retry/retry-policy.interface';
import { resolveMessagingOptions } from './resolve-messaging-options';

const KAFKA: MessagingModuleOptions = {
  serviceName: 'post-service',
  transport: { kind: 'kafka', brokers: ['127.0.0.1:9092'] },
};
const RABBIT: MessagingModuleOptions = {
  serviceName: 'post-service',
  transport: { kind: 'rabbitmq', url: 'amqp://guest:guest@127.0.0.1:5672/' },
};

const DEFAULT_RELAY = {
  enabled: true,
  mode: 'poll',
  batchSize: 200,
  pollIntervalMs: 10_000,
  leaseMs: 30_000,
  notify: false,
  retryInitialDelayMs: 200,
  retryMaxDelayMs: 2_000,
};
const DEFAULT_RETENTION = { sentRetentionMs: 86_400_000, intervalMs: 60_000, batchSize: 1_000 };
const DEFAULT_CONSUMERS = {
  autoStart: true,
  inboxRetentionMs: 7 * 24 * 60 * 60 * 1000,
  concurrency: 4,
  batchSize: 50,
  unhandledTypes: 'settle',
  unhandledTypesByGroup: {},
  versionHold: {
    windowMs: 1_500_000,
    initialDelayMs: 1_000,
    maxDelayMs: 60_000,
    holdSchemaMismatches: false,
  },
};

/** The issues of the InvalidMessagingOptionsError that resolving `options` throws. */
function issuesOf(options: unknown): readonly OptionIssue[] {
  try {
    resolveMessagingOptions(options as MessagingModuleOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidMessagingOptionsError);
    return (error as InvalidMessagingOptionsError).issues;
  }
  throw new Error('expected InvalidMessagingOptionsError');
}

const pathsOf = (options: unknown) => issuesOf(options).map((issue) => issue.path);

describe('resolve-messaging-options', () => {
  describe(resolveMessagingOptions.name, () => {
    describe('defaults', () => {
      it('fills every default for Kafka', () => {
        expect(resolveMessagingOptions(KAFKA)).toEqual({
          serviceName: 'post-service',
          transport: {
            kind: 'kafka',
            brokers: ['127.0.0.1:9092'],
            topics: { numPartitions: 3, replicationFactor: 1 },
            connectionTimeoutMs: 3_000,
            sessionTimeoutMs: 30_000,
            ssl: false,
            producerClient: 'kafkajs',
          },
          relay: DEFAULT_RELAY,
          retention: DEFAULT_RETENTION,
          consumers: DEFAULT_CONSUMERS,
          retryDefaults: new Map(),
          classification: [],
          deadLetter: { carryHeaders: [], keySecret: undefined },
          topology: 'verify',
        });
      });

      it('fills every default for RabbitMQ', () => {
        expect(resolveMessagingOptions(RABBIT)).toEqual({
          serviceName: 'post-service',
          transport: {
            kind: 'rabbitmq',
            url: 'amqp://guest:guest@127.0.0.1:5672/',
            prefetch: 256,
            heartbeatSeconds: 10,
            queueType: 'classic',
            queueTypes: {},
          },
          relay: DEFAULT_RELAY,
          retention: DEFAULT_RETENTION,
          consumers: DEFAULT_CONSUMERS,
          retryDefaults: new Map(),
          classification: [],
          deadLetter: { carryHeaders: [], keySecret: undefined },
          topology: 'verify',
        });
      });

      it('fills the defaults a partial group leaves out', () => {
        const resolved = resolveMessagingOptions({
          ...KAFKA,
          transport: { kind: 'kafka', brokers: ['a:9092'], topics: { replicationFactor: 3 } },
          relay: { notify: true, batchSize: 50 },
          consumers: { autoStart: false },
        });
        expect(resolved.transport).toMatchObject({ topics: { numPartitions: 3, replicationFactor: 3 } });
        expect(resolved.relay).toEqual({ ...DEFAULT_RELAY, notify: true, batchSize: 50 });
        expect(resolved.consumers).toEqual({ ...DEFAULT_CONSUMERS, autoStart: false });
      });

      it('keeps every option that was given', () => {
        const options: MessagingModuleOptions = {
          serviceName: 'svc.1_a-b',
          transport: {
            kind: 'kafka',
            brokers: ['kafka-1:9092', '10.0.0.2:19092'],
            clientId: 'post-client',
            producerClient: 'platformatic',
            topics: { numPartitions: 12, replicationFactor: 3 },
            connectionTimeoutMs: 1_000,
            sessionTimeoutMs: 6_000,
            sasl: { mechanism: 'scram-sha-512', username: 'post-service', password: 'p' },
            ssl: true,
          },
          relay: {
            enabled: false,
            mode: 'logical',
            slot: 'orders_outbox',
            batchSize: 5_000,
            pollIntervalMs: 1,
            leaseMs: 1_000,
            notify: true,
            retryInitialDelayMs: 50,
            retryMaxDelayMs: 50,
          },
          retention: { sentRetentionMs: 0, intervalMs: 5, batchSize: 7 },
          consumers: {
            autoStart: false,
            inboxRetentionMs: 1,
            concurrency: 256,
            batchSize: 1,
            unhandledTypes: 'dead-letter',
            unhandledTypesByGroup: { audit: 'settle' },
            versionHold: { windowMs: 0, initialDelayMs: 5, maxDelayMs: 5, holdSchemaMismatches: true },
          },
          deadLetter: { carryHeaders: ['x-tenant'] },
          topology: 'declare',
        };
        expect(resolveMessagingOptions(options)).toEqual({
          ...options,
          retryDefaults: new Map(),
          classification: [],
          deadLetter: { carryHeaders: ['x-tenant'], keySecret: undefined },
        });
      });

      it('parses the key secret, and refuses a short one without showing it', () => {
        const secret = Buffer.alloc(32, 7).toString('base64');
        const resolved = resolveMessagingOptions({ ...KAFKA, deadLetter: { keySecret: secret } });
        expect(resolved.deadLetter.keySecret?.pseudonymKey).toHaveLength(32);
        const issues = issuesOf({ ...KAFKA, deadLetter: { keySecret: 'hunter2' } });
        expect(issues.map((i) => i.path)).toEqual(['deadLetter.keySecret']);
        expect(issues[0].message).not.toContain('hunter2');
      });

      it('refuses SASL plain without TLS, which would send the password as is', () => {
        const sasl = { mechanism: 'plain' as const, username: 'svc', password: 'p' };
        expect(pathsOf({ ...KAFKA, transport: { ...KAFKA.transport, sasl } })).toEqual([
          'transport.sasl.mechanism',
        ]);
        const overTls = { ...KAFKA, transport: { ...KAFKA.transport, sasl, ssl: true } };
        expect(resolveMessagingOptions(overTls).transport).toMatchObject({ sasl, ssl: true });
      });

      it('accepts amqps:// URLs and keeps RabbitMQ settings', () => {
        const resolved = resolveMessagingOptions({
          ...RABBIT,
          transport: { kind: 'rabbitmq', url: 'amqps://broker/vhost', prefetch: 1, heartbeatSeconds: 60 },
        });
        expect(resolved.transport).toEqual({
          kind: 'rabbitmq',
          url: 'amqps://broker/vhost',
          prefetch: 1,
          heartbeatSeconds: 60,
          queueType: 'classic',
          queueTypes: {},
        });
      });

      it('does not change the options it was given', () => {
        const options = { ...KAFKA, relay: { batchSize: 10 } };
        const copy = structuredClone(options);
        resolveMessagingOptions(options);
        expect(options).toEqual(copy);
      });

      it('passes classification rules through', () => {
        class PaymentDeclinedError extends Error {}
        const rule = { errorClass: PaymentDeclinedError, category: FailureCategory.VALIDATION, code: 'PAY' };
        const resolved = resolveMessagingOptions({ ...KAFKA, classification: [rule] });
        expect(resolved.classification).toEqual([rule]);
        expect(new ErrorClassifier(resolved.classification).classify(new PaymentDeclinedError())).toEqual({
          category: FailureCategory.VALIDATION,
          code: 'PAY',
        });
      });
    });

    describe('retryDefaults', () => {
      it('resolves each policy through resolveRetryPolicy', () => {
        const declared = { maxAttempts: 4, mode: RetryMode.BROKER_DELAYED, backoff: { initialDelayMs: 500 } };
        const resolved = resolveMessagingOptions({
          ...RABBIT,
          retryDefaults: {
            'post-create': declared,
            'post-delete': { maxAttempts: 1, mode: RetryMode.INLINE },
          },
        });
        expect(resolved.retryDefaults).toEqual(
          new Map([
            ['post-create', resolveRetryPolicy(declared)],
            ['post-delete', resolveRetryPolicy({ maxAttempts: 1, mode: RetryMode.INLINE })],
          ]),
        );
        expect(resolved.retryDefaults.get('post-create')).toMatchObject({
          ordering: RetryOrdering.PRESERVE,
          backoff: { initialDelayMs: 500, multiplier: 2, maxDelayMs: 30_000 },
          onNonRetryable: 'DEAD_LETTER',
        });
      });

      it('has no default for a destination named like an Object.prototype member', () => {
        const resolved = resolveMessagingOptions({
          ...KAFKA,
          retryDefaults: { 'post-create': { maxAttempts: 2, mode: RetryMode.INLINE } },
        });
        for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
          expect(resolved.retryDefaults.get(name)).toBeUndefined();
        }
      });

      it('keeps a default for a destination named constructor', () => {
        const resolved = resolveMessagingOptions({
          ...KAFKA,
          retryDefaults: { constructor: { maxAttempts: 2, mode: RetryMode.INLINE } },
        });
        expect(resolved.retryDefaults.get('constructor')).toMatchObject({ maxAttempts: 2 });
      });

      it('reports an invalid policy under retryDefaults.<destination>, with the policy error', () => {
        const issues = issuesOf({
          ...KAFKA,
          retryDefaults: { 'post-create': { maxAttempts: 0, mode: RetryMode.INLINE } },
        });
        expect(issues).toEqual([
          {
            path: 'retryDefaults.post-create',
            message: 'Invalid retry policy: maxAttempts is 0; expected an integer >= 1 (deliveries in all).',
          },
        ]);
      });

      it('reports an invalid mode under retryDefaults.<destination>', () => {
        const issues = issuesOf({
          ...KAFKA,
          retryDefaults: { 'post-create': { maxAttempts: 3, mode: 'SOON' } },
        });
        expect(issues).toHaveLength(1);
        expect(issues[0].path).toBe('retryDefaults.post-create');
        expect(issues[0].message).toContain('mode is "SOON"');
      });

      it('reports a policy that is not an object under retryDefaults.<destination>', () => {
        expect(pathsOf({ ...KAFKA, retryDefaults: { 'post-create': null } })).toEqual([
          'retryDefaults.post-create',
        ]);
        expect(pathsOf({ ...KAFKA, retryDefaults: { 'post-create': 3 } })).toEqual([
          'retryDefaults.post-create',
        ]);
      });
    });

    describe('invalid options', () => {
      const invalid: Array<[name: string, options: unknown, path: string]> = [
        ['no brokers', { ...KAFKA, transport: { kind: 'kafka', brokers: [] } }, 'transport.brokers'],
        ['brokers missing', { ...KAFKA, transport: { kind: 'kafka' } }, 'transport.brokers'],
        [
          'brokers not a list',
          { ...KAFKA, transport: { kind: 'kafka', brokers: 'a:1' } },
          'transport.brokers',
        ],
        [
          'a broker without port',
          { ...KAFKA, transport: { kind: 'kafka', brokers: ['kafka'] } },
          'transport.brokers.0',
        ],
        [
          'a broker with a space',
          { ...KAFKA, transport: { kind: 'kafka', brokers: ['a:1', 'kaf ka:9092'] } },
          'transport.brokers.1',
        ],
        [
          'a clientId with a slash',
          { ...KAFKA, transport: { kind: 'kafka', brokers: ['a:1'], clientId: 'a/b' } },
          'transport.clientId',
        ],
        [
          'zero partitions',
          { ...KAFKA, transport: { kind: 'kafka', brokers: ['a:1'], topics: { numPartitions: 0 } } },
          'transport.topics.numPartitions',
        ],
        [
          'a fractional replication factor',
          { ...KAFKA, transport: { kind: 'kafka', brokers: ['a:1'], topics: { replicationFactor: 1.5 } } },
          'transport.topics.replicationFactor',
        ],
        [
          'a session timeout under 6000 ms',
          { ...KAFKA, transport: { kind: 'kafka', brokers: ['a:1'], sessionTimeoutMs: 5_999 } },
          'transport.sessionTimeoutMs',
        ],
        [
          'a negative connection timeout',
          { ...KAFKA, transport: { kind: 'kafka', brokers: ['a:1'], connectionTimeoutMs: -1 } },
          'transport.connectionTimeoutMs',
        ],
        ['an http URL', { ...RABBIT, transport: { kind: 'rabbitmq', url: 'http://x' } }, 'transport.url'],
        ['no URL', { ...RABBIT, transport: { kind: 'rabbitmq' } }, 'transport.url'],
        [
          'zero prefetch',
          { ...RABBIT, transport: { kind: 'rabbitmq', url: 'amqp://x', prefetch: 0 } },
          'transport.prefetch',
        ],
        [
          'a heartbeat as a string',
          { ...RABBIT, transport: { kind: 'rabbitmq', url: 'amqp://x', heartbeatSeconds: '10' } },
          'transport.heartbeatSeconds',
        ],
        [
          'an unknown transport kind',
          { ...KAFKA, transport: { kind: 'nats', url: 'nats://x' } },
          'transport.kind',
        ],
        ['no transport', { serviceName: 'svc' }, 'transport'],
        ['a relay batch size of 0', { ...KAFKA, relay: { batchSize: 0 } }, 'relay.batchSize'],
        ['a relay batch size over 5000', { ...KAFKA, relay: { batchSize: 5_001 } }, 'relay.batchSize'],
        ['a fractional relay batch size', { ...KAFKA, relay: { batchSize: 1.5 } }, 'relay.batchSize'],
        [
          'a poll interval as a string',
          { ...KAFKA, relay: { pollIntervalMs: '100' } },
          'relay.pollIntervalMs',
        ],
        ['a lease under 1000 ms', { ...KAFKA, relay: { leaseMs: 999 } }, 'relay.leaseMs'],
        ['enabled as a string', { ...KAFKA, relay: { enabled: 'yes' } }, 'relay.enabled'],
        ['an unknown relay mode', { ...KAFKA, relay: { mode: 'cdc' } }, 'relay.mode'],
        ['a slot name with a capital', { ...KAFKA, relay: { slot: 'Outbox' } }, 'relay.slot'],
        ['a slot name over 63 characters', { ...KAFKA, relay: { slot: 's'.repeat(64) } }, 'relay.slot'],
        [
          'a retry ceiling below the default first delay',
          { ...KAFKA, relay: { retryMaxDelayMs: 100 } },
          'relay.retryMaxDelayMs',
        ],
        [
          'a retry ceiling below the first delay',
          { ...KAFKA, relay: { retryInitialDelayMs: 1_000, retryMaxDelayMs: 999 } },
          'relay.retryMaxDelayMs',
        ],
        [
          'a negative sent retention',
          { ...KAFKA, retention: { sentRetentionMs: -1 } },
          'retention.sentRetentionMs',
        ],
        ['a retention interval of 0', { ...KAFKA, retention: { intervalMs: 0 } }, 'retention.intervalMs'],
        ['a concurrency of 0', { ...KAFKA, consumers: { concurrency: 0 } }, 'consumers.concurrency'],
        ['a concurrency over 256', { ...KAFKA, consumers: { concurrency: 257 } }, 'consumers.concurrency'],
        ['a batch size of 0', { ...KAFKA, consumers: { batchSize: 0 } }, 'consumers.batchSize'],
        ['a batch size over 500', { ...KAFKA, consumers: { batchSize: 501 } }, 'consumers.batchSize'],
        ['a batch size of 2.5', { ...KAFKA, consumers: { batchSize: 2.5 } }, 'consumers.batchSize'],
        [
          'an unknown unhandledTypes action',
          { ...KAFKA, consumers: { unhandledTypes: 'drop' } },
          'consumers.unhandledTypes',
        ],
        [
          'an unknown action for one group',
          { ...KAFKA, consumers: { unhandledTypesByGroup: { billing: 'ignore' } } },
          'consumers.unhandledTypesByGroup.billing',
        ],
        [
          'a negative hold window',
          { ...KAFKA, consumers: { versionHold: { windowMs: -1 } } },
          'consumers.versionHold.windowMs',
        ],
        [
          'a hold window of NaN',
          { ...KAFKA, consumers: { versionHold: { windowMs: Number.NaN } } },
          'consumers.versionHold.windowMs',
        ],
        [
          'a first hold wait of 0',
          { ...KAFKA, consumers: { versionHold: { initialDelayMs: 0 } } },
          'consumers.versionHold.initialDelayMs',
        ],
        [
          'a longest hold wait below the first',
          { ...KAFKA, consumers: { versionHold: { initialDelayMs: 5_000, maxDelayMs: 4_000 } } },
          'consumers.versionHold.maxDelayMs',
        ],
        [
          'an unknown hold option',
          { ...KAFKA, consumers: { versionHold: { schemaMismatch: 'hold' } } },
          'consumers.versionHold.schemaMismatch',
        ],
        [
          'an inbox retention as NaN',
          { ...KAFKA, consumers: { inboxRetentionMs: Number.NaN } },
          'consumers.inboxRetentionMs',
        ],
        ['no service name', { transport: KAFKA.transport }, 'serviceName'],
        ['an empty service name', { ...KAFKA, serviceName: '' }, 'serviceName'],
        ['a service name with a space', { ...KAFKA, serviceName: 'post service' }, 'serviceName'],
        ['a service name over 100 characters', { ...KAFKA, serviceName: 's'.repeat(101) }, 'serviceName'],
        ['classification not a list', { ...KAFKA, classification: {} }, 'classification'],
        [
          'a classification rule that is not an object',
          { ...KAFKA, classification: [1] },
          'classification.0',
        ],
        ['retryDefaults not a record', { ...KAFKA, retryDefaults: 5 }, 'retryDefaults'],
      ];

      it.each(invalid.map(([name, options, path]) => [name, path, options] as const))(
        'reports %s under %s',
        (_, path, options) => {
          expect(pathsOf(options)).toEqual([path]);
        },
      );

      it('says what a bad option must be', () => {
        expect(issuesOf({ ...KAFKA, transport: { kind: 'kafka', brokers: [] } })).toEqual([
          { path: 'transport.brokers', message: 'must name at least one broker (host:port)' },
        ]);
        expect(issuesOf({ ...KAFKA, transport: { ...KAFKA.transport, producerClient: 'rdkafka' } })).toEqual([
          { path: 'transport.producerClient', message: "must be 'kafkajs' or 'platformatic'" },
        ]);
        expect(issuesOf({ ...KAFKA, relay: { retryMaxDelayMs: 100 } })).toEqual([
          { path: 'relay.retryMaxDelayMs', message: 'retryMaxDelayMs must be ≥ retryInitialDelayMs' },
        ]);
        expect(issuesOf({ ...KAFKA, transport: { kind: 'nats' } })).toEqual([
          {
            path: 'transport.kind',
            message: "must be { kind: 'kafka', brokers } or { kind: 'rabbitmq', url }",
          },
        ]);
      });

      it.each<[string, unknown, string]>([
        ['at the root', { ...KAFKA, retries: 3 }, 'retries'],
        ['in relay', { ...KAFKA, relay: { batchsize: 10 } }, 'relay.batchsize'],
        ['in retention', { ...KAFKA, retention: { ttl: 10 } }, 'retention.ttl'],
        ['in consumers', { ...KAFKA, consumers: { prefetch: 10 } }, 'consumers.prefetch'],
        [
          'in the Kafka transport',
          { ...KAFKA, transport: { ...KAFKA.transport, url: 'x' } },
          'transport.url',
        ],
        [
          'in the Kafka topics',
          { ...KAFKA, transport: { ...KAFKA.transport, topics: { partitions: 3 } } },
          'transport.topics.partitions',
        ],
        [
          'in the RabbitMQ transport',
          { ...RABBIT, transport: { ...RABBIT.transport, brokers: ['a:1'] } },
          'transport.brokers',
        ],
      ])('reports an unknown key %s by its own path', (_, options, path) => {
        const issues = issuesOf(options);
        expect(issues).toHaveLength(1);
        expect(issues[0].path).toBe(path);
        expect(issues[0].message).toBe('unknown option');
      });

      it('reports options that are not an object at the root', () => {
        expect(pathsOf(null)).toEqual(['(root)']);
        expect(pathsOf('kafka')).toEqual(['(root)']);
      });

      it('reports every bad retry default, together with the other issues', () => {
        const paths = pathsOf({
          ...KAFKA,
          relay: { batchSize: 0 },
          retryDefaults: { a: { maxAttempts: 0, mode: 'INLINE' }, b: { maxAttempts: 1, mode: 'X' } },
        });
        expect([...paths].sort()).toEqual(['relay.batchSize', 'retryDefaults.a', 'retryDefaults.b']);
      });

      it('reports several issues at once', () => {
        const paths = pathsOf({
          serviceName: '',
          transport: { kind: 'rabbitmq', url: 'http://broker', prefetch: 0 },
          relay: { batchSize: 0, leaseMs: 10, retryInitialDelayMs: 1_000, retryMaxDelayMs: 100 },
          retention: { sentRetentionMs: -1 },
          consumers: { concurrency: 1_000 },
          extra: true,
        });
        expect([...paths].sort()).toEqual(
          [
            'extra',
            'serviceName',
            'transport.url',
            'transport.prefetch',
            'relay.batchSize',
            'relay.leaseMs',
            'relay.retryMaxDelayMs',
            'retention.sentRetentionMs',
            'consumers.concurrency',
          ].sort(),
        );
      });

      it('lists every issue in the error message', () => {
        let thrown: unknown;
        try {
          resolveMessagingOptions({ ...KAFKA, serviceName: '', relay: { batchSize: 0 } });
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(InvalidMessagingOptionsError);
        const error = thrown as InvalidMessagingOptionsError;
        expect(error.name).toBe('InvalidMessagingOptionsError');
        expect(error.message).toContain('  - serviceName: ');
        expect(error.message).toContain('  - relay.batchSize: must be > 0 (rows per round trip)');
      });
    });
  });
});

describe('resolveMessagingOptions (tenants)', () => {
  const secret = Buffer.alloc(32, 5).toString('base64');

  it('is off by default, and fills in the tenant defaults when on', () => {
    expect(resolveMessagingOptions(RABBIT).tenants).toBeUndefined();
    const tenants = resolveMessagingOptions({ ...RABBIT, tenants: { signingSecret: secret } }).tenants;
    expect(tenants).toMatchObject({ concurrentClaims: 4, maxLabelledTenants: 50 });
    expect(tenants?.signingKey).toHaveLength(32);
  });

  it("refuses a short signing secret, relay.mode 'external' and a slot name", () => {
    const issues = (options: MessagingModuleOptions): readonly OptionIssue[] => {
      try {
        resolveMessagingOptions(options);
      } catch (error) {
        return (error as InvalidMessagingOptionsError).issues;
      }
      return [];
    };
    expect(issues({ ...RABBIT, tenants: { signingSecret: 'short' } }).map((i) => i.path)).toEqual([
      'tenants.signingSecret',
    ]);
    expect(
      issues({ ...RABBIT, relay: { mode: 'external' }, tenants: { signingSecret: secret } }).map(
        (i) => i.path,
      ),
    ).toEqual(['relay.mode']);
    expect(
      issues({
        ...RABBIT,
        relay: { mode: 'logical', slot: 'one_slot' },
        tenants: { signingSecret: secret },
      }).map((i) => i.path),
    ).toEqual(['relay.slot']);
  });

  it("takes relay.mode 'logical': each tenant's relay reads a slot of its own", () => {
    const resolved = resolveMessagingOptions({
      ...RABBIT,
      relay: { mode: 'logical' },
      tenants: { signingSecret: secret },
    });
    expect(resolved.relay.mode).toBe('logical');
    expect(resolved.tenants?.signingKey).toHaveLength(32);
  });
});
