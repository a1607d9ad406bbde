import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { OUTBOX_METADATA } from '../messaging.constants';
import type { OutboxOptions } from './outbox.decorator';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- what Reflector reads metadata from
type Target = Function;

/** Reads what `@Outbox()` attached to a method, beside the decorator that attached it. */
@Injectable()
export class OutboxMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  /** `@Outbox()`'s options, or `undefined` when the method has none. */
  outbox(method: Target): OutboxOptions | undefined {
    return this.reflector.get<OutboxOptions | undefined>(OUTBOX_METADATA, method);
  }
}
