import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { IdempotentHandlerMetadata } from '../consumers/idempotent-handler.decorator';
import { IDEMPOTENT_HANDLER_METADATA, OUTBOX_METADATA, RETRY_POLICY_METADATA } from '../messaging.constants';
import type { OutboxOptions } from '../outbox/outbox.decorator';
import type { RetryPolicyOptions } from '../retry/retry-policy.interface';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- what Reflector reads metadata from
type Target = Function;

/** Reads what the library's decorators attached to a method: the one place that knows the metadata keys. */
@Injectable()
export class MessagingMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  /** `@Outbox()`'s options, or `undefined` when the method has none. */
  outbox(method: Target): OutboxOptions | undefined {
    return this.reflector.get<OutboxOptions | undefined>(OUTBOX_METADATA, method);
  }

  /** `@IdempotentHandler()`'s event and group, or `undefined`. */
  idempotentHandler(method: Target): IdempotentHandlerMetadata | undefined {
    return this.reflector.get<IdempotentHandlerMetadata | undefined>(IDEMPOTENT_HANDLER_METADATA, method);
  }

  /** `@RetryPolicy()`'s options, or `undefined`. */
  retryPolicy(method: Target): RetryPolicyOptions | undefined {
    return this.reflector.get<RetryPolicyOptions | undefined>(RETRY_POLICY_METADATA, method);
  }
}
