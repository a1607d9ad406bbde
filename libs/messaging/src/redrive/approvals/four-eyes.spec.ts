import { ApprovalMismatchError } from '../errors/approval-mismatch.error';
import { ApproverKeyring } from './approver-keyring';
import { generateApproverKeys } from './approver-keys';
import { checkFourEyes, RedriveParticipants } from './four-eyes';

const jane = generateApproverKeys('jane.doe').publicKey.publicKey;
const bob = generateApproverKeys('bob').publicKey.publicKey;

/** The identity map of the example: ops-alice and jane.doe are two people, unless told otherwise. */
const map = (janeAccounts: string[] = ['ops-jane']) =>
  ApproverKeyring.parse({
    version: 2,
    people: [
      { name: 'jane.doe', accounts: janeAccounts, publicKey: jane },
      { name: 'bob', publicKey: bob },
      { name: 'alice', accounts: ['ops-alice', 'alice@console'] },
    ],
  });
const namesOnly = ApproverKeyring.parse({
  version: 1,
  approvers: [{ approver: 'jane.doe', publicKey: jane }],
});

function refusal(keyring: ApproverKeyring, who: RedriveParticipants, requireMap = true) {
  try {
    checkFourEyes(keyring, who, requireMap);
  } catch (error) {
    expect(error).toBeInstanceOf(ApprovalMismatchError);
    return error as ApprovalMismatchError;
  }
  return undefined;
}

describe(checkFourEyes.name, () => {
  const planned = { planner: 'ops-alice', approver: 'jane.doe', executor: 'ops-alice' };

  it('passes three accounts of three people, or two people where one plans and executes', () => {
    expect(refusal(map(), planned)).toBeUndefined();
    expect(refusal(map(), { ...planned, executor: 'bob' })).toBeUndefined();
    expect(refusal(map(), { planner: 'alice@console', approver: 'bob' })).toBeUndefined();
  });

  it('refuses one person with a broker principal and an approver key (the names differ, the person not)', () => {
    const oneperson = map(['ops-alice-2', 'ops-jane']);
    const same = refusal(oneperson, { ...planned, planner: 'ops-jane' });
    expect(same?.mismatch).toBe('SELF_APPROVAL');
    expect(same?.message).toContain("'ops-jane' and 'jane.doe' are one person (jane.doe)");
    expect(refusal(oneperson, { ...planned, executor: 'OPS-JANE' })?.mismatch).toBe('SELF_APPROVAL');
    expect(refusal(oneperson, { ...planned, credential: 'ops-jane' })?.mismatch).toBe('SELF_APPROVAL');
  });

  it('refuses an account the map does not know, naming it and its role', () => {
    const unknown = refusal(map(), { ...planned, executor: 'ops-mallory' });
    expect(unknown?.mismatch).toBe('UNMAPPED_ACCOUNT');
    expect(unknown?.message).toContain("the executor 'ops-mallory' is in no entry of the identity map");
    expect(refusal(map(), { ...planned, approver: 'carol' })?.mismatch).toBe('UNMAPPED_ACCOUNT');
    // A front end's own service account may be left out of the map.
    expect(refusal(map(), { ...planned, credential: 'ops-console' })).toBeUndefined();
  });

  it('refuses every approval without an identity map, unless it may go without (local development)', () => {
    expect(refusal(namesOnly, planned)?.mismatch).toBe('NO_IDENTITY_MAP');
    expect(refusal(namesOnly, planned, false)).toBeUndefined();
    expect(refusal(namesOnly, { ...planned, executor: 'Jane.Doe' }, false)?.mismatch).toBe('SELF_APPROVAL');
    expect(refusal(ApproverKeyring.empty(), { ...planned, planner: 'jane.doe' }, false)?.mismatch).toBe(
      'SELF_APPROVAL',
    );
  });
});

describe(ApproverKeyring.name, () => {
  it('reads an identity map: people, their accounts, keys for approvers only', () => {
    const keyring = map();
    expect(keyring.hasIdentityMap).toBe(true);
    expect(keyring.approvers).toEqual(['jane.doe', 'bob']);
    expect(keyring.publicKeyOf('alice')).toBeUndefined();
    expect(keyring.personOf('OPS-JANE')).toBe('jane.doe');
    expect(keyring.personOf('jane.doe')).toBe('jane.doe');
    expect(keyring.personOf('ops-mallory')).toBeUndefined();
    expect(namesOnly.hasIdentityMap).toBe(false);
    expect(namesOnly.personOf('jane.doe')).toBeUndefined();
  });

  it('refuses an account given to two people, and accounts with control characters', () => {
    const twice = {
      version: 2,
      people: [
        { name: 'jane.doe', accounts: ['ops'] },
        { name: 'bob', accounts: ['OPS'] },
      ],
    };
    expect(() => ApproverKeyring.parse(twice)).toThrow(/'OPS' twice, for jane.doe and bob/);
    const sneaky = { version: 2, people: [{ name: 'bob', accounts: ['ops\u001b[2K'] }] };
    expect(() => ApproverKeyring.parse(sneaky)).toThrow();
  });
});
