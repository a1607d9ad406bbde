import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { IDEMPOTENT_HANDLER_METADATA, RETRY_POLICY_METADATA } from '../messaging.constants';
import type { RetryPolicyOptions } from '../retry/retry-policy.interface';
import type { IdempotentHandlerMetadata } from './idempotent-handler.decorator';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- what Reflector reads metadata from
type Target = Function;

/**
 * Reads what `@IdempotentHandler()` and `@RetryPolicy()` attached to a handler method. Each feature has its
 * own accessor beside it, so that no shared file has to know every feature (and import upwards into them).
 */
@Injectable()
export class ConsumerMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  /** `@IdempotentHandler()`'s event and group, or `undefined`. */
  idempotentHandler(method: Target): IdempotentHandlerMetadata | undefined {
    return this.reflector.get<IdempotentHandlerMetadata | undefined>(IDEMPOTENT_HANDLER_METADATA, method);
  }

  /** `@RetryPolicy()`'s options, or `undefined`. */
  retryPolicy(method: Target): RetryPolicyOptions | undefined {
    return this.reflector.get<RetryPolicyOptions | undefined>(RETRY_POLICY_METADATA, method);
  }
}
