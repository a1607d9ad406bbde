import { z } from 'zod';
import { InvalidMessagingOptionsError } from '../errors/invalid-messaging-options.error';
import { MessagingModuleOptions } from '../messaging-options.interface';
import { ClassificationRule } from '../retry/error-classifier';
import { ResolvedRetryPolicy, RetryPolicyOptions } from '../retry/retry-policy.interface';
import { resolveRetryPolicy } from '../retry/retry-policy';
import { messagingOptionsSchema } from './messaging-options.schema';

type Parsed = z.output<typeof messagingOptionsSchema>;

/** Options after validation, with every default filled in. */
export type ResolvedMessagingOptions = Omit<Parsed, 'retryDefaults' | 'classification'> & {
  readonly retryDefaults: Readonly<Record<string, ResolvedRetryPolicy>>;
  readonly classification: readonly ClassificationRule[];
};

/** Validates the module options at startup; an error names every bad option. */
export function resolveMessagingOptions(options: MessagingModuleOptions): ResolvedMessagingOptions {
  const parsed = messagingOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new InvalidMessagingOptionsError(
      parsed.error.issues.map((issue) => ({
        path: issue.path.join('.') || '(root)',
        message: issue.message,
      })),
    );
  }
  const retryDefaults: Record<string, ResolvedRetryPolicy> = {};
  for (const [destination, policy] of Object.entries(parsed.data.retryDefaults)) {
    try {
      retryDefaults[destination] = resolveRetryPolicy(policy as RetryPolicyOptions);
    } catch (error) {
      throw new InvalidMessagingOptionsError([
        { path: `retryDefaults.${destination}`, message: (error as Error).message },
      ]);
    }
  }
  return {
    ...parsed.data,
    retryDefaults,
    classification: parsed.data.classification as ClassificationRule[],
  };
}
