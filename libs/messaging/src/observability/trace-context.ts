import { context, propagation } from '@opentelemetry/api';

/**
 * The active W3C trace context (`traceparent`, `tracestate`) as headers. Empty without an OpenTelemetry
 * SDK: the API's default propagator is a no-op, so this costs next to nothing then.
 */
export function currentTraceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}
