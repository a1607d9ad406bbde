import { Inject } from '@nestjs/common';
import {
  MESSAGING_CLOCK,
  MESSAGING_DATA_SOURCE,
  MESSAGING_RESOLVED_OPTIONS,
  MESSAGING_TRANSPORT,
} from './messaging.constants';

// Functions rather than the symbols themselves, as @nestjs/typeorm's getDataSourceToken(): the symbols stay
// private to the library and a test overrides a provider through a name that is part of the API.

/** The injection token of the broker transport, e.g. for `overrideProvider()` in tests. */
export function getMessagingTransportToken(): symbol {
  return MESSAGING_TRANSPORT;
}

/** Injects the broker transport. */
export const InjectMessagingTransport = (): PropertyDecorator & ParameterDecorator =>
  Inject(getMessagingTransportToken());

/** The injection token of the validated options with every default filled in. */
export function getMessagingOptionsToken(): symbol {
  return MESSAGING_RESOLVED_OPTIONS;
}

/** Injects the validated options with every default filled in. */
export const InjectMessagingOptions = (): PropertyDecorator & ParameterDecorator =>
  Inject(getMessagingOptionsToken());

/**
 * The injection token of the `Clock` the library reads time, starts timers and draws backoff jitter with
 * (the relay, the consumers, the transports, the purges; `systemClock` unless overridden):
 * `overrideProvider(getMessagingClockToken()).useValue(clock)` with a `FakeClock` from
 * `nest-reliable-messaging/testing` runs their time in a test.
 */
export function getMessagingClockToken(): symbol {
  return MESSAGING_CLOCK;
}

/** The injection token of the TypeORM DataSource the library writes its tables in (the application's by default). */
export function getMessagingDataSourceToken(): symbol {
  return MESSAGING_DATA_SOURCE;
}
