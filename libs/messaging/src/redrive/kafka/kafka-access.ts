import { AdminCredentialRefusedError } from '../errors/admin-credential-refused.error';

/** Kafka error types that mean the broker refused the principal. */
const REFUSALS = new Set([
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'SASL_AUTHENTICATION_FAILED',
]);

/** Runs a Kafka operation, turning an authorization or SASL failure into `AdminCredentialRefusedError`. */
export async function asKafkaAdmin<T>(
  principal: string,
  operation: string,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isRefusal(error)) throw new AdminCredentialRefusedError(principal, operation, { cause: error });
    // kafkajs swallows FindCoordinator's GROUP_AUTHORIZATION_FAILED and reports no coordinator at all.
    if ((error as { name?: unknown } | null)?.name === 'KafkaJSGroupCoordinatorNotFound') {
      const why =
        'no coordinator answered for its consumer group: the principal may not use the group (or, ' +
        'if the cluster is just starting, try again)';
      throw new AdminCredentialRefusedError(principal, `${operation}; ${why}`, { cause: error });
    }
    throw error;
  }
}

function isRefusal(error: unknown): boolean {
  const { type, name } = (error ?? {}) as { type?: unknown; name?: unknown };
  return (typeof type === 'string' && REFUSALS.has(type)) || name === 'KafkaJSSASLAuthenticationError';
}
