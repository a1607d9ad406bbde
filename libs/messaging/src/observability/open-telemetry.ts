import type * as OpenTelemetryApi from '@opentelemetry/api';
import { tryRequirePeer } from '../common/optional-peer';

/**
 * `@opentelemetry/api` when the application has it (an optional peer), loaded once with the library;
 * `undefined` otherwise, and then the library makes no spans and propagates no trace context.
 */
export const openTelemetry = tryRequirePeer<typeof OpenTelemetryApi>('@opentelemetry/api');
