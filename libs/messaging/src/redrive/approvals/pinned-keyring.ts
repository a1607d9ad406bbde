import { KeyringNotPinnedError } from '../errors/keyring-not-pinned.error';
import { RedriveLedger } from '../ledger/redrive-ledger.interface';
import { ApproverKeyring } from './approver-keyring';

/**
 * Refuses `keyring` when the admin database pins another (issue 45, item 5): the reviewed keyring is the
 * database's, not whatever file the executor's environment names. Nothing pinned: nothing to compare.
 */
export async function checkPinnedKeyring(ledger: RedriveLedger, keyring: ApproverKeyring): Promise<void> {
  const pinned = await ledger.pinnedKeyring?.();
  if (pinned !== undefined && pinned !== keyring.fingerprint) {
    throw new KeyringNotPinnedError(keyring.fingerprint, pinned);
  }
}
