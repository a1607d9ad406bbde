import { createHash } from 'node:crypto';
import { MessagingTopology, parseMessagingTopology } from '../topology/messaging-topology';
import { ApproverKeyring } from './approvals/approver-keyring';
import { canonicalJson } from './canonical-json';
import { KeyringNotPinnedError } from './errors/keyring-not-pinned.error';
import { TopologyNotPinnedError } from './errors/topology-not-pinned.error';
import { RedriveLedger } from './ledger/redrive-ledger.interface';

/** What the admin database pins after review: the approver keyring, the topology routes come from. */
export type PinnedTrustRoot = 'keyring' | 'topology';

/**
 * The one rule for both (issue 45, findings 4 and 14): what the executor's (or approver's) environment names
 * must be what the admin database pins, not whatever file it points at; `inUse` undefined (no file) is
 * refused too once one is pinned. Nothing pinned: nothing to compare.
 */
export async function checkPinned(
  ledger: RedriveLedger,
  what: PinnedTrustRoot,
  inUse: string | undefined,
): Promise<void> {
  const pinned = what === 'keyring' ? await ledger.pinnedKeyring?.() : await ledger.pinnedTopology?.();
  if (pinned === undefined || pinned === inUse) return;
  throw what === 'keyring'
    ? new KeyringNotPinnedError(inUse ?? 'none', pinned)
    : new TopologyNotPinnedError(inUse, pinned);
}

/** Refuses `keyring` when the admin database pins another (`nest-messaging db pin-keyring`). */
export function checkPinnedKeyring(ledger: RedriveLedger, keyring: ApproverKeyring): Promise<void> {
  return checkPinned(ledger, 'keyring', keyring.fingerprint);
}

/**
 * Refuses `topology` (or none) when the admin database pins another (`nest-messaging db pin-topology`): a
 * route-ambiguous DLQ takes its target from the topology, so the executor's own file could redirect it.
 */
export function checkPinnedTopology(
  ledger: RedriveLedger,
  topology: MessagingTopology | undefined,
): Promise<void> {
  return checkPinned(ledger, 'topology', topology && topologyFingerprint(topology));
}

/**
 * `sha256:` of the topology's canonical JSON, its defaults filled in: the same for the file and for the
 * object a console builds from it, different after any edit.
 */
export function topologyFingerprint(topology: MessagingTopology): string {
  const normal = parseMessagingTopology({ destinations: topology.destinations, groups: topology.groups });
  return `sha256:${createHash('sha256').update(canonicalJson(normal), 'utf8').digest('hex')}`;
}
