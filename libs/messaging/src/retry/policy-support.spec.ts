import { TransportCapabilities } from './transport-capabilities';
import { unsupportedPolicyReason } from './policy-support';
import { resolveRetryPolicy } from './retry-policy';
import { RetryMode, RetryOrdering } from './retry-policy.interface';

const KAFKA: TransportCapabilities = { orderedStream: true, delayedDelivery: false, retryDestinations: true };
const RABBIT: TransportCapabilities = {
  orderedStream: false,
  delayedDelivery: true,
  retryDestinations: false,
};
const QUEUE_WITH_RETRY_TOPICS: TransportCapabilities = { ...RABBIT, retryDestinations: true };
const NOTHING: TransportCapabilities = {
  orderedStream: false,
  delayedDelivery: false,
  retryDestinations: false,
};

const { PAUSE_PARTITION, RETRY_DESTINATION, INLINE, BROKER_DELAYED } = RetryMode;
const { PRESERVE, ALLOW_REORDER } = RetryOrdering;

describe(unsupportedPolicyReason.name, () => {
  it.each<[RetryMode, RetryOrdering, string, TransportCapabilities, RegExp | undefined]>([
    [PAUSE_PARTITION, PRESERVE, 'Kafka', KAFKA, undefined],
    [PAUSE_PARTITION, PRESERVE, 'RabbitMQ', RABBIT, /PAUSE_PARTITION needs .*orderedStream/],
    [RETRY_DESTINATION, ALLOW_REORDER, 'Kafka', KAFKA, undefined],
    [RETRY_DESTINATION, PRESERVE, 'Kafka (step 3 keeps order)', KAFKA, undefined],
    [RETRY_DESTINATION, ALLOW_REORDER, 'RabbitMQ', RABBIT, /RETRY_DESTINATION needs .*retryDestinations/],
    [RETRY_DESTINATION, ALLOW_REORDER, 'a queue with retry topics', QUEUE_WITH_RETRY_TOPICS, undefined],
    [RETRY_DESTINATION, PRESERVE, 'a queue with retry topics', QUEUE_WITH_RETRY_TOPICS, /could never retry/],
    [BROKER_DELAYED, PRESERVE, 'RabbitMQ', RABBIT, undefined],
    [BROKER_DELAYED, ALLOW_REORDER, 'Kafka', KAFKA, /BROKER_DELAYED needs .*delayedDelivery/],
    [INLINE, PRESERVE, 'a transport with no capabilities', NOTHING, undefined],
  ])('%s with %s on %s', (mode, ordering, _transport, capabilities, expected) => {
    const reason = unsupportedPolicyReason(
      resolveRetryPolicy({ maxAttempts: 3, mode, ordering }),
      capabilities,
    );
    if (expected === undefined) expect(reason).toBeUndefined();
    else expect(reason).toMatch(expected);
  });
});
