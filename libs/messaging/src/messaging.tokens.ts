import { Inject } from '@nestjs/common';
import { MESSAGING_RESOLVED_OPTIONS, MESSAGING_TRANSPORT } from './messaging.constants';

/** The injection token of the broker transport (`MessageTransport`), e.g. for `overrideProvider()` in tests. */
export function getMessagingTransportToken(): symbol {
  return MESSAGING_TRANSPORT;
}

/** Injects the broker transport (`MessageTransport`). */
export const InjectMessagingTransport = (): PropertyDecorator & ParameterDecorator =>
  Inject(getMessagingTransportToken());

/** The injection token of the validated options with every default filled in (`ResolvedMessagingOptions`). */
export function getMessagingOptionsToken(): symbol {
  return MESSAGING_RESOLVED_OPTIONS;
}

/** Injects the validated options (`ResolvedMessagingOptions`). */
export const InjectMessagingOptions = (): PropertyDecorator & ParameterDecorator =>
  Inject(getMessagingOptionsToken());
