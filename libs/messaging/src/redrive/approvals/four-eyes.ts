import { ApprovalMismatchError } from '../errors/approval-mismatch.error';
import { ApproverKeyring } from './approver-keyring';
import { samePerson } from './approver-name';

/** Who took part in a redrive, by the names they acted under. */
export interface RedriveParticipants {
  /** The account that made the plan, as the audit log's PLAN entry names it. */
  readonly planner: string;
  /** The approver's name (their key's). */
  readonly approver: string;
  /** The account that executes; undefined when the approval is being signed. */
  readonly executor?: string;
  /** The broker principal a front end acts through for its users (the console); it approves nothing. */
  readonly credential?: string;
}

/**
 * Four eyes: the approver is neither the planner nor the executor, and does not own the credential. With
 * an identity map the accounts are looked up and people compared (an account the map does not know is
 * refused); without one the names are compared, which only `requireMap: false` (local development)
 * accepts. Throws `ApprovalMismatchError` (`NO_IDENTITY_MAP`, `UNMAPPED_ACCOUNT`, `SELF_APPROVAL`).
 */
export function checkFourEyes(keyring: ApproverKeyring, who: RedriveParticipants, requireMap: boolean): void {
  const others: Array<[role: string, account: string | undefined]> = [
    ['planner', who.planner],
    ['executor', who.executor],
  ];
  if (!keyring.hasIdentityMap) {
    if (requireMap) throw new ApprovalMismatchError('NO_IDENTITY_MAP');
    const named = [...others.map(([, account]) => account), who.credential];
    if (named.some((account) => account !== undefined && samePerson(account, who.approver))) {
      throw new ApprovalMismatchError('SELF_APPROVAL');
    }
    return;
  }
  const personOf = (role: string, account: string): string => {
    const person = keyring.personOf(account);
    if (person !== undefined) return person;
    throw new ApprovalMismatchError(
      'UNMAPPED_ACCOUNT',
      `the ${role} '${account}' is in no entry of the identity map (MESSAGING_ADMIN_APPROVERS): add it to ` +
        'the accounts of the person who uses it',
    );
  };
  const approver = personOf('approver', who.approver);
  const sameAsApprover = (account: string) =>
    new ApprovalMismatchError(
      'SELF_APPROVAL',
      `four eyes: '${account}' and '${who.approver}' are one person (${approver}) in the identity map; ` +
        'planner, approver and executor are three people',
    );
  for (const [role, account] of others) {
    if (account !== undefined && personOf(role, account) === approver) throw sameAsApprover(account);
  }
  // The front end's own principal may be a service account the map leaves out; if it is someone's, not theirs.
  if (who.credential !== undefined && keyring.personOf(who.credential) === approver) {
    throw sameAsApprover(who.credential);
  }
}
