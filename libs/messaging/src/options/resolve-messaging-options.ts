import { z } from 'zod';
import { InvalidKeySecretError } from '../failure/invalid-key-secret.error';
import { KeySecret, parseKeySecret } from '../failure/key-secret';
import { InvalidMessagingOptionsError, OptionIssue } from '../errors/invalid-messaging-options.error';
import { MessagingModuleOptions } from '../messaging-options.interface';
import { ClassificationRule } from '../retry/error-classifier';
import { ResolvedRetryPolicy } from '../retry/retry-policy.interface';
import { resolveRetryPolicy } from '../retry/retry-policy';
import { messagingOptionsSchema } from './messaging-options.schema';
import { MIN_TENANT_SECRET_BYTES, tenantSigningKey } from '../envelope/tenant-signature';

/** The options as the schema parses them, before the retry and dead-letter defaults are resolved. */
export type ParsedMessagingOptions = z.output<typeof messagingOptionsSchema>;

/** Options after validation, with every default filled in. */
export type ResolvedMessagingOptions = Omit<
  ParsedMessagingOptions,
  'retryDefaults' | 'classification' | 'deadLetter' | 'tenants'
> & {
  /** Undefined: tenants are off (one DataSource). */
  readonly tenants?: {
    /** The HMAC key of tenant signatures, derived from `tenants.signingSecret`. */
    readonly signingKey: Buffer;
    readonly concurrentClaims: number;
    readonly maxLabelledTenants: number;
    /** How long a tenant's database may not answer before the consumer parks that tenant's deliveries. */
    readonly parkAfterMs: number;
  };
  /** A map, so that a destination named `constructor` (a valid name) finds no built-in function. */
  readonly retryDefaults: ReadonlyMap<string, ResolvedRetryPolicy>;
  readonly classification: readonly ClassificationRule[];
  readonly deadLetter: {
    /** Undefined when not given: the consumer explorer refuses to start consumers without it. */
    readonly keySecret?: KeySecret;
    readonly carryHeaders: readonly string[];
  };
};

/** Validates the module options at startup; an error names every bad option. */
export function resolveMessagingOptions(options: MessagingModuleOptions): ResolvedMessagingOptions {
  const parsed = messagingOptionsSchema.safeParse(options);
  if (!parsed.success) throw new InvalidMessagingOptionsError(parsed.error.issues.flatMap(toOptionIssues));
  const retryDefaults = new Map<string, ResolvedRetryPolicy>();
  for (const [destination, policy] of Object.entries(parsed.data.retryDefaults)) {
    retryDefaults.set(destination, resolveRetryPolicy(policy)); // the schema has validated it already
  }
  const { tenants, ...rest } = parsed.data;
  return {
    ...rest,
    tenants: tenants && resolveTenants(tenants, parsed.data.relay),
    retryDefaults,
    classification: parsed.data.classification,
    deadLetter: { ...parsed.data.deadLetter, keySecret: keySecretOf(parsed.data.deadLetter.keySecret) },
  };
}

function resolveTenants(
  tenants: NonNullable<ParsedMessagingOptions['tenants']>,
  relay: ParsedMessagingOptions['relay'],
): ResolvedMessagingOptions['tenants'] {
  const issues: OptionIssue[] = [];
  const signingKey = tenantSigningKey(tenants.signingSecret);
  if (!signingKey) {
    issues.push({
      path: 'tenants.signingSecret',
      message: `must be base64 of at least ${MIN_TENANT_SECRET_BYTES} random bytes (openssl rand -base64 32)`,
    });
  }
  if (relay.mode === 'external') {
    issues.push({
      path: 'relay.mode',
      message:
        "tenants are relayed by the library's relays ('poll' or 'logical'); 'external' is refused with tenants on",
    });
  }
  if (relay.slot !== undefined) {
    issues.push({
      path: 'relay.slot',
      message:
        "with tenants on, each tenant's slot is named after it (messaging_tenant_<name>): leave relay.slot unset",
    });
  }
  if (!signingKey || issues.length > 0) throw new InvalidMessagingOptionsError(issues);
  return { ...tenants, signingKey };
}

function keySecretOf(text: string | undefined): KeySecret | undefined {
  if (text === undefined) return undefined;
  try {
    return parseKeySecret(text, 'deadLetter.keySecret');
  } catch (error) {
    if (!(error instanceof InvalidKeySecretError)) throw error;
    throw new InvalidMessagingOptionsError([{ path: 'deadLetter.keySecret', message: error.message }]);
  }
}

/** One issue per bad option; an unknown key is named by its own path (`relay.foo`), not its parent's. */
function toOptionIssues(issue: z.core.$ZodIssue): OptionIssue[] {
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: [...path, key].join('.'), message: 'unknown option' }));
  }
  return [{ path: path.join('.') || '(root)', message: issue.message }];
}
