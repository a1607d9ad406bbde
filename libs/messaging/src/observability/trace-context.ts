import { openTelemetry } from './open-telemetry';

/**
 * The active W3C trace context (`traceparent`, `tracestate`) as headers. Empty without an OpenTelemetry
 * SDK (the API's default propagator is a no-op, so this costs next to nothing then) or without
 * `@opentelemetry/api` installed.
 */
export function currentTraceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  openTelemetry?.propagation.inject(openTelemetry.context.active(), carrier);
  return carrier;
}
