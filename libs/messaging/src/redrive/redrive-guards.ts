import { AdminCredential, RedriveBroker } from './admin-connection';
import { isPrintableName } from './approvals/approver-name';
import { MissingAdminCredentialError } from './errors/missing-admin-credential.error';
import { RedriveBatchTooLargeError } from './errors/redrive-batch-too-large.error';
import { SameSourceAndTargetError } from './errors/same-source-and-target.error';
import { RedriveLimits } from './redrive-limits';

/**
 * The credential, if it names a principal (printable) and a secret; refuses otherwise. `secretOptional`:
 * a broker that checks no password (Kafka without SASL in local development) needs the principal only.
 */
export function requireCredential(
  credential: AdminCredential | undefined,
  secretOptional = false,
): AdminCredential {
  const principal = credential?.principal;
  if (!principal?.trim() || !isPrintableName(principal) || (!credential?.secret && !secretOptional)) {
    throw new MissingAdminCredentialError();
  }
  return { principal, secret: credential?.secret ?? '' };
}

/** True when `broker` is local development (`allowPlaintextLocal`); `checkAdminConnection` holds it to loopback. */
export function isLocalDevelopment(broker: RedriveBroker): boolean {
  return broker.allowPlaintextLocal === true;
}

/** Refuses a batch of more than 100 messages; rejects a size that is not a positive integer. */
export function checkBatchSize(size: number): void {
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError(
      `A redrive batch size is an integer from 1 to ${RedriveLimits.MAX_BATCH}; got ${size}.`,
    );
  }
  if (size > RedriveLimits.MAX_BATCH) throw new RedriveBatchTooLargeError(size, RedriveLimits.MAX_BATCH);
}

/** Refuses a plan whose messages exceed the batch limit (a plan may be empty). */
export function checkPlannedCount(count: number): void {
  if (count > RedriveLimits.MAX_BATCH) throw new RedriveBatchTooLargeError(count, RedriveLimits.MAX_BATCH);
}

/** Refuses a redrive into the destination it reads. */
export function checkDistinctTarget(source: string, target: string): void {
  if (source.trim() === target.trim()) throw new SameSourceAndTargetError(source);
}
