import { TransportCapabilities } from './transport-capabilities';
import { ResolvedRetryPolicy, RetryMode, RetryOrdering } from './retry-policy.interface';

type SupportCheck = (policy: ResolvedRetryPolicy, capabilities: TransportCapabilities) => string | undefined;

/** What each mode needs from the transport; one entry per mode, so a new mode cannot be forgotten. */
const SUPPORT: Readonly<Record<RetryMode, SupportCheck>> = Object.freeze({
  [RetryMode.PAUSE_PARTITION]: (_policy, capabilities) =>
    capabilities.orderedStream
      ? undefined
      : 'mode PAUSE_PARTITION needs a transport whose destinations are ordered streams it can pause ' +
        '(capabilities.orderedStream); this transport has none. Use a mode it supports (INLINE always is).',
  [RetryMode.RETRY_DESTINATION]: (policy, capabilities) => {
    if (!capabilities.retryDestinations) {
      return (
        'mode RETRY_DESTINATION needs a transport that can publish to and consume from retry ' +
        'destinations (capabilities.retryDestinations); this transport cannot. Use a mode it supports (INLINE always is).'
      );
    }
    if (policy.ordering !== RetryOrdering.ALLOW_REORDER && !capabilities.orderedStream) {
      return (
        'mode RETRY_DESTINATION with ordering PRESERVE could never retry on this transport: a retry ' +
        'destination reorders, so it is used only with ordering ALLOW_REORDER, and the order-preserving pause ' +
        'needs capabilities.orderedStream, which this transport lacks. Declare ordering ALLOW_REORDER ' +
        '(the destination is a work queue) or use another mode.'
      );
    }
    return undefined;
  },
  [RetryMode.INLINE]: () => undefined,
  [RetryMode.BROKER_DELAYED]: (_policy, capabilities) =>
    capabilities.delayedDelivery
      ? undefined
      : 'mode BROKER_DELAYED needs a broker that can hold a message back for a delay ' +
        '(capabilities.delayedDelivery); this transport cannot. Use a mode it supports (INLINE always is).',
});

/**
 * Why the transport cannot honour the policy, or `undefined` when it can. Checked at startup: the caller
 * turns a reason into a configuration error naming the handler's class and method. INLINE is always
 * supported.
 */
export function unsupportedPolicyReason(
  policy: ResolvedRetryPolicy,
  capabilities: TransportCapabilities,
): string | undefined {
  return SUPPORT[policy.mode](policy, capabilities);
}
