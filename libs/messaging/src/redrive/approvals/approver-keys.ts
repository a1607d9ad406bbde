import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { z } from 'zod';
import { isApproverName } from './approver-name';

/**
 * An approver's private key file (`nest-messaging approver keygen`): the approver's name and an Ed25519 private
 * key (PKCS#8 PEM, encrypted when a passphrase was given). Kept by the approver alone, mode 0600.
 */
export interface ApproverPrivateKeyFile {
  /** Version of the file format: 1. */
  readonly version: 1;
  /** The approver's name: letters, digits, `.`, `_`, `@` or `-`. */
  readonly approver: string;
  /** The Ed25519 private key, PKCS#8 PEM; encrypted (AES-256-CBC) when a passphrase was given. */
  readonly privateKey: string;
}

/** An entry of the executors' keyring: an approver's name and Ed25519 public key (SPKI PEM). */
export interface ApproverPublicKey {
  /** The approver's name, as in the private key file. */
  readonly approver: string;
  /** The Ed25519 public key, SPKI PEM. */
  readonly publicKey: string;
}

/** An approver who can sign: the name and the private key. */
export interface ApproverSigner {
  /** The approver's name, written into the approvals it signs. */
  readonly approver: string;
  /** The approver's Ed25519 private key, decrypted. */
  readonly key: KeyObject;
}

const approverName = z.string().refine(isApproverName, 'must be letters, digits, ".", "_", "@" or "-"');

const privateKeyFileSchema = z.strictObject({
  version: z.literal(1),
  approver: approverName,
  privateKey: z.string().min(1),
});

/** Makes a new Ed25519 key pair for `approver`; the private key is encrypted with `passphrase` if given. */
export function generateApproverKeys(
  approver: string,
  passphrase?: string,
): { privateKeyFile: ApproverPrivateKeyFile; publicKey: ApproverPublicKey } {
  approverName.parse(approver);
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const encryption = passphrase ? { cipher: 'aes-256-cbc', passphrase } : {};
  return {
    privateKeyFile: {
      version: 1,
      approver,
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem', ...encryption }).toString(),
    },
    publicKey: { approver, publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
  };
}

/** Reads an approver's private key file; `passphrase` opens an encrypted one. */
export function readApproverSigner(json: unknown, passphrase?: string): ApproverSigner {
  const file = privateKeyFileSchema.parse(json);
  const key = createPrivateKey({ key: file.privateKey, format: 'pem', passphrase });
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('The approver key is not an Ed25519 key.');
  return { approver: file.approver, key };
}

/** An Ed25519 public key from its SPKI PEM; throws for anything else. */
export function ed25519PublicKey(pem: string): KeyObject {
  const key = createPublicKey({ key: pem, format: 'pem' });
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('not an Ed25519 public key');
  return key;
}
