import { AdminCredentialRefusedError } from '../errors/admin-credential-refused.error';

/** AMQP reply code for ACCESS_REFUSED. */
const ACCESS_REFUSED = 403;
/** AMQP reply code for NOT_FOUND. */
export const NOT_FOUND = 404;

/** The AMQP reply code of a failed channel operation, if the error carries one. */
export function replyCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * Runs a broker operation, turning the broker's refusal of the credential into `AdminCredentialRefusedError`:
 * a channel operation closed with 403, or a login refused during the handshake (amqplib reports that one
 * only in the message text: "Handshake terminated by server: 403 (ACCESS-REFUSED)").
 */
export async function asAdmin<T>(principal: string, operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const handshakeRefused =
      error instanceof Error && /^Handshake terminated by server: 403\b/.test(error.message);
    if (replyCode(error) === ACCESS_REFUSED || handshakeRefused) {
      throw new AdminCredentialRefusedError(principal, operation, { cause: error });
    }
    throw error;
  }
}
