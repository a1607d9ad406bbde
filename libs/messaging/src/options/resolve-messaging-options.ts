import { z } from 'zod';
import { InvalidKeySecretError } from '../failure/invalid-key-secret.error';
import { KeySecret, parseKeySecret } from '../failure/key-secret';
import { InvalidMessagingOptionsError, OptionIssue } from '../errors/invalid-messaging-options.error';
import { MessagingModuleOptions } from '../messaging-options.interface';
import { ClassificationRule } from '../retry/error-classifier';
import { ResolvedRetryPolicy } from '../retry/retry-policy.interface';
import { resolveRetryPolicy } from '../retry/retry-policy';
import { messagingOptionsSchema } from './messaging-options.schema';

/** The options as the schema parses them, before the retry and dead-letter defaults are resolved. */
export type ParsedMessagingOptions = z.output<typeof messagingOptionsSchema>;

/** Options after validation, with every default filled in. */
export type ResolvedMessagingOptions = Omit<
  ParsedMessagingOptions,
  'retryDefaults' | 'classification' | 'deadLetter'
> & {
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
  return {
    ...parsed.data,
    retryDefaults,
    classification: parsed.data.classification,
    deadLetter: { ...parsed.data.deadLetter, keySecret: keySecretOf(parsed.data.deadLetter.keySecret) },
  };
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
