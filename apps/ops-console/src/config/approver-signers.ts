import { createPublicKey } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { MessagingTopology, parseMessagingTopology } from 'nest-reliable-messaging';
import { ApproverKeyring, ApproverSigner, readApproverSigner } from 'nest-reliable-messaging/redrive';
import { z } from 'zod';

type Env = Readonly<Record<string, string | undefined>>;

const KEY_FILE = /\.approver-key\.json$/;

const passphrasesSchema = z.record(z.string(), z.string().min(1));

/**
 * The approvers' keys the console signs with (`CONSOLE_APPROVER_KEYS`, a folder of
 * `<name>.approver-key.json`), trusted only when the reviewed keyring (`MESSAGING_ADMIN_APPROVERS`) holds
 * the same public key under the same name. Each key opens with a passphrase of its own
 * (`CONSOLE_APPROVER_PASSPHRASES`, `{ "<name>": "<passphrase>" }`); an unencrypted key is for local
 * development only. The folder and the files must be the console user's own, unreadable by others.
 * Throws one error naming every file that is refused, and why.
 */
export async function readTrustedSigners(
  env: Env,
  keyring: ApproverKeyring,
  local: boolean,
): Promise<ApproverSigner[]> {
  const dir = env.CONSOLE_APPROVER_KEYS;
  if (!dir) return [];
  if (env.MESSAGING_APPROVER_KEY_PASSPHRASE) {
    throw new Error(
      'MESSAGING_APPROVER_KEY_PASSPHRASE opens one approver’s key (the CLI’s); the console takes one ' +
        'passphrase per key: CONSOLE_APPROVER_PASSPHRASES = { "<approver>": "<passphrase>", … }.',
    );
  }
  const passphrases = passphrasesOf(env.CONSOLE_APPROVER_PASSPHRASES);
  await checkPrivate(dir, 'folder', 0o022);
  const problems: string[] = [];
  const signers: ApproverSigner[] = [];
  for (const file of (await fs.readdir(dir)).filter((f) => KEY_FILE.test(f)).sort()) {
    const full = path.join(dir, file);
    try {
      await checkPrivate(full, 'file', 0o077);
      const json = JSON.parse(await fs.readFile(full, 'utf8')) as {
        approver?: unknown;
        privateKey?: unknown;
      };
      const name = typeof json.approver === 'string' ? json.approver : '';
      const encrypted = typeof json.privateKey === 'string' && json.privateKey.includes('ENCRYPTED');
      if (!encrypted && !local) {
        throw new Error(
          'is not encrypted: make it with MESSAGING_APPROVER_KEY_PASSPHRASE set (approver keygen)',
        );
      }
      if (encrypted && !passphrases[name])
        throw new Error(`has no passphrase in CONSOLE_APPROVER_PASSPHRASES`);
      const signer = readApproverSigner(json, encrypted ? passphrases[name] : undefined);
      const trusted = keyring.publicKeyOf(signer.approver);
      if (!trusted) throw new Error(`names '${signer.approver}', whom the reviewed keyring does not hold`);
      if (!createPublicKey(signer.key).equals(trusted)) {
        throw new Error(`is not the key the reviewed keyring holds for '${signer.approver}'`);
      }
      signers.push(signer);
    } catch (error) {
      problems.push(`${file} ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (problems.length > 0) {
    throw new Error(
      `CONSOLE_APPROVER_KEYS: ${problems.join('; ')}. The console signs with reviewed keys only.`,
    );
  }
  return signers;
}

/** `CONSOLE_APPROVER_PASSPHRASES`, refusing one passphrase shared by two keys. */
function passphrasesOf(json: string | undefined): Record<string, string> {
  if (!json) return {};
  let parsed: Record<string, string>;
  try {
    parsed = passphrasesSchema.parse(JSON.parse(json));
  } catch {
    throw new Error(
      'CONSOLE_APPROVER_PASSPHRASES is { "<approver>": "<passphrase>", … } (its value is not shown).',
    );
  }
  const values = Object.values(parsed);
  if (new Set(values).size !== values.length) {
    throw new Error('CONSOLE_APPROVER_PASSPHRASES gives two keys one passphrase: give each key its own.');
  }
  return parsed;
}

/** Refuses a file or folder of another user, or one whose mode grants others `forbidden` bits. */
async function checkPrivate(file: string, what: string, forbidden: number): Promise<void> {
  const stat = await fs.stat(file);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw new Error(`belongs to another user (a ${what} of the console’s own)`);
  if ((stat.mode & forbidden) !== 0) {
    const mode = (stat.mode & 0o777).toString(8);
    throw new Error(
      `is open to other users (mode ${mode}): chmod ${what === 'folder' ? '700' : '600'} ${file}`,
    );
  }
}

/** `MESSAGING_ADMIN_TOPOLOGY`: the topology redrive routes come from, if given. */
export async function readTopology(file: string | undefined): Promise<MessagingTopology | undefined> {
  return file ? parseMessagingTopology(JSON.parse(await fs.readFile(file, 'utf8'))) : undefined;
}
