import { createHash, createPublicKey, KeyObject } from 'node:crypto';
import { canonicalJson } from '../canonical-json';
import { z } from 'zod';
import { ed25519PublicKey } from './approver-keys';
import { isApproverName, isPrintableName, samePerson } from './approver-name';

const approverName = z.string().refine(isApproverName, 'must be letters, digits, ".", "_", "@" or "-"');
const publicKey = z.string().refine((pem) => {
  try {
    ed25519PublicKey(pem);
    return true;
  } catch {
    return false;
  }
}, 'must be an Ed25519 public key (SPKI PEM, as `nest-messaging approver keygen` writes it)');

const keyringV1 = z.strictObject({
  version: z.literal(1),
  approvers: z.array(z.strictObject({ approver: approverName, publicKey })),
});

const keyringV2 = z.strictObject({
  version: z.literal(2),
  people: z.array(
    z.strictObject({
      name: approverName,
      accounts: z
        .array(z.string().refine(isPrintableName, 'must be 1-256 characters without control characters'))
        .default([]),
      publicKey: publicKey.optional(),
    }),
  ),
});

const keyringSchema = z.union([keyringV1, keyringV2]);

/** One person of the identity map: the names they act under, and their approver key if they approve. */
interface Person {
  readonly name: string;
  readonly accounts: readonly string[];
  readonly key?: KeyObject;
}

/**
 * Who may approve, and who is who: the file the operators keep under review (e.g. in the deployment
 * repository). An approval counts only when its approver has a key here and the signature verifies under it:
 * a name alone proves nothing.
 *
 * Version 2 is also the **identity map**: each person with the accounts they act under (broker principals,
 * console user names) and, for approvers, their Ed25519 public key. Four eyes then counts people: the planner,
 * the approver and the executor must be three accounts of three different people, and an account the map
 * does not know is refused. Version 1 (approvers and keys only) has no identity map: names are compared as
 * they are, which `RedriveService` accepts in local development only.
 *
 * ```json
 * { "version": 2, "people": [
 *   { "name": "jane.doe", "accounts": ["ops-jane"], "publicKey": "-----BEGIN PUBLIC KEY-----…" },
 *   { "name": "alice", "accounts": ["ops-alice", "alice"] } ] }
 * ```
 */
export class ApproverKeyring {
  private constructor(
    private readonly people: readonly Person[],
    /** True when the file is an identity map (version 2). */
    readonly hasIdentityMap: boolean,
    /**
     * `sha256:` of the file's canonical JSON (whitespace and key order do not count): what the admin database
     * pins (`nest-messaging db pin-keyring`) and every approval's evidence names.
     */
    readonly fingerprint: string,
  ) {}

  /** Reads a keyring file, version 1 (`approvers`) or 2 (`people`, the identity map). */
  static parse(json: unknown): ApproverKeyring {
    const parsed = keyringSchema.parse(json);
    const people: Person[] =
      parsed.version === 1
        ? parsed.approvers.map((a) => ({
            name: a.approver,
            accounts: [],
            key: ed25519PublicKey(a.publicKey),
          }))
        : parsed.people.map((p) => ({
            name: p.name,
            accounts: p.accounts,
            key: p.publicKey === undefined ? undefined : ed25519PublicKey(p.publicKey),
          }));
    const seen: Array<{ name: string; entry: number }> = [];
    for (const [entry, person] of people.entries()) {
      for (const name of [person.name, ...person.accounts]) {
        const earlier = seen.find((s) => samePerson(s.name, name));
        if (earlier?.entry === entry) continue; // an entry may repeat its person's own name
        if (earlier) {
          const first = people[earlier.entry].name;
          throw new Error(
            `The approver keyring names '${name}' twice, for ${first} and ${person.name}: one account, one person.`,
          );
        }
        seen.push({ name, entry });
      }
    }
    return new ApproverKeyring(people, parsed.version === 2, fingerprintOf(json));
  }

  /** A keyring that trusts nobody: every approval is refused (planning and listing need none). */
  static empty(): ApproverKeyring {
    return new ApproverKeyring([], false, fingerprintOf({ version: 1, approvers: [] }));
  }

  /** The public key of `approver`, or undefined when the keyring holds no key under that exact name. */
  publicKeyOf(approver: string): KeyObject | undefined {
    return this.people.find((p) => p.name === approver)?.key;
  }

  /** `sha256:` of `approver`'s public key (SPKI DER), or undefined when the keyring holds none for them. */
  keyIdOf(approver: string): string | undefined {
    const key = this.publicKeyOf(approver);
    return key && publicKeyId(key);
  }

  /** The names of the people with an approver key. */
  get approvers(): string[] {
    return this.people.filter((p) => p.key).map((p) => p.name);
  }

  /**
   * The person who acts under `account` (their name, or one of their accounts; `Jane.Doe` and `jane.doe`
   * are one), or undefined when the identity map does not know it (always undefined without one).
   */
  personOf(account: string): string | undefined {
    if (!this.hasIdentityMap) return undefined;
    return this.people.find((p) => [p.name, ...p.accounts].some((name) => samePerson(name, account)))?.name;
  }
}

/** The file as reviewed (checked strictly above: no key it does not know), in canonical JSON. */
function fingerprintOf(json: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(json), 'utf8').digest('hex')}`;
}

/** `sha256:` of a public key's SPKI DER (of its public half, for a private key): an approval's key id. */
export function publicKeyId(key: KeyObject): string {
  const spki = (key.type === 'private' ? createPublicKey(key) : key).export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}
