import { createHash } from 'node:crypto';

/**
 * The one-time token of editing one dead letter (`ApprovalUse.claims`): `edit:` and the base64url SHA-256 of
 * its broker, destination and fingerprint. The first edit executed records it with its approval's nonce,
 * in one transaction; any other edit of the same dead letter finds it taken.
 */
export function editClaimOf(transport: string, source: string, fingerprint: string): string {
  const digest = createHash('sha256').update(`${transport}\0${source}\0${fingerprint}`).digest('base64url');
  return `edit:${digest}`;
}
