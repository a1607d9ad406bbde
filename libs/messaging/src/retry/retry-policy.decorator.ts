import { SetMetadata } from '@nestjs/common';
import { RETRY_POLICY_METADATA } from '../messaging.constants';
import { RetryPolicyOptions } from './retry-policy.interface';

/**
 * Declares how failures of an `@IdempotentHandler()` are retried. Without it (and without a default for the
 * destination in the module's `retryDefaults`) nothing is retried: a failed message is dead-lettered.
 * A policy the transport cannot honour fails the application's startup, naming the class and method.
 *
 * ```ts
 * @RetryPolicy({ maxAttempts: 5, mode: RetryMode.PAUSE_PARTITION, backoff: { initialDelayMs: 500 } })
 * ```
 */
export function RetryPolicy(options: RetryPolicyOptions): MethodDecorator {
  return SetMetadata(RETRY_POLICY_METADATA, options);
}
