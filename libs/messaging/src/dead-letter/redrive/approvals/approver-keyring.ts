import { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { ed25519PublicKey } from './approver-keys';
import { isApproverName, samePerson } from './approver-name';

const keyringSchema = z.strictObject({
  version: z.literal(1),
  approvers: z.array(
    z.strictObject({
      approver: z.string().refine(isApproverName, 'must be letters, digits, ".", "_", "@" or "-"'),
      publicKey: z.string().refine((pem) => {
        try {
          ed25519PublicKey(pem);
          return true;
        } catch {
          return false;
        }
      }, 'must be an Ed25519 public key (SPKI PEM, as `nest-messaging approver keygen` writes it)'),
    }),
  ),
});

/**
 * The approvers an executor trusts, by name, with their Ed25519 public keys (a JSON file the operators keep
 * under review, e.g. in the deployment repository). An approval counts only when its approver is in the
 * keyring and the signature verifies under that approver's key: a name alone proves nothing.
 */
export class ApproverKeyring {
  private constructor(private readonly keys: ReadonlyMap<string, KeyObject>) {}

  /** Reads a keyring file: `{ "version": 1, "approvers": [{ "approver", "publicKey" }] }`. */
  static parse(json: unknown): ApproverKeyring {
    const parsed = keyringSchema.parse(json);
    const keys = new Map<string, KeyObject>();
    for (const entry of parsed.approvers) {
      if ([...keys.keys()].some((name) => samePerson(name, entry.approver))) {
        throw new Error(`The approver keyring names '${entry.approver}' twice.`);
      }
      keys.set(entry.approver, ed25519PublicKey(entry.publicKey));
    }
    return new ApproverKeyring(keys);
  }

  /** A keyring that trusts nobody: every approval is refused (planning and listing need none). */
  static empty(): ApproverKeyring {
    return new ApproverKeyring(new Map());
  }

  /** The public key of `approver`, or undefined when the keyring does not know the name. */
  publicKeyOf(approver: string): KeyObject | undefined {
    return this.keys.get(approver);
  }

  /** The names in the keyring. */
  get approvers(): string[] {
    return [...this.keys.keys()];
  }
}
