import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApproverKeyring, generateApproverKeys } from 'nest-reliable-messaging/redrive';
import { readTrustedSigners } from './approver-signers';

/**
 * The console trusts only the keys of the reviewed keyring, each opened with its own
 * passphrase, from files no other user can read.
 */
describe(readTrustedSigners.name, () => {
  const bob = generateApproverKeys('bob', 'bob-passphrase');
  const olga = generateApproverKeys('olga', 'olga-passphrase');
  const mallory = generateApproverKeys('mallory', 'mallory-passphrase');
  const keyring = ApproverKeyring.parse({
    version: 2,
    people: [
      { name: 'bob', accounts: ['bob'], publicKey: bob.publicKey.publicKey },
      { name: 'olga', publicKey: olga.publicKey.publicKey },
    ],
  });
  const passphrases = JSON.stringify({
    bob: 'bob-passphrase',
    olga: 'olga-passphrase',
    mallory: 'mallory-passphrase',
  });
  let dir: string;

  function write(name: string, file: object, mode = 0o600) {
    const full = path.join(dir, `${name}.approver-key.json`);
    writeFileSync(full, JSON.stringify(file));
    chmodSync(full, mode);
  }
  const read = (env: Record<string, string> = {}, local = false) =>
    readTrustedSigners(
      { CONSOLE_APPROVER_KEYS: dir, CONSOLE_APPROVER_PASSPHRASES: passphrases, ...env },
      keyring,
      local,
    );

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'console-keys-'));
    chmodSync(dir, 0o700);
    write('bob', bob.privateKeyFile);
    write('olga', olga.privateKeyFile);
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('trusts the keys the reviewed keyring holds, each opened with its own passphrase', async () => {
    expect((await read()).map((s) => s.approver)).toEqual(['bob', 'olga']);
  });

  it('refuses a key file dropped into the folder that the keyring does not hold', async () => {
    write('mallory', mallory.privateKeyFile);
    await expect(read()).rejects.toThrow(
      "mallory.approver-key.json names 'mallory', whom the reviewed keyring does not hold",
    );
  });

  it('refuses a key under a keyring name that is not the keyring’s key', async () => {
    const impostor = generateApproverKeys('bob', 'bob-passphrase');
    write('bob', impostor.privateKeyFile);
    await expect(read()).rejects.toThrow("is not the key the reviewed keyring holds for 'bob'");
  });

  it('refuses a key file or folder other users can read or write', async () => {
    write('olga', olga.privateKeyFile, 0o644);
    await expect(read()).rejects.toThrow(/olga.approver-key.json is open to other users \(mode 644\)/);
    write('olga', olga.privateKeyFile, 0o600);
    chmodSync(dir, 0o777);
    await expect(read()).rejects.toThrow(/is open to other users \(mode 777\)/);
  });

  it('refuses one passphrase for all keys, a key without its passphrase, and an unencrypted key outside local development', async () => {
    await expect(read({ MESSAGING_APPROVER_KEY_PASSPHRASE: 'shared' })).rejects.toThrow(
      /one\s+passphrase per key/,
    );
    const shared = JSON.stringify({ bob: 'same', olga: 'same' });
    await expect(read({ CONSOLE_APPROVER_PASSPHRASES: shared })).rejects.toThrow('two keys one passphrase');
    await expect(
      read({ CONSOLE_APPROVER_PASSPHRASES: JSON.stringify({ bob: 'bob-passphrase' }) }),
    ).rejects.toThrow('olga.approver-key.json has no passphrase');
    write('olga', generateApproverKeys('olga').privateKeyFile);
    await expect(read()).rejects.toThrow('olga.approver-key.json is not encrypted');
  });

  it('takes an unencrypted key in local development, if the keyring holds it', async () => {
    const plain = generateApproverKeys('olga');
    write('olga', plain.privateKeyFile);
    const local = ApproverKeyring.parse({ version: 1, approvers: [bob.publicKey, plain.publicKey] });
    const signers = await readTrustedSigners(
      { CONSOLE_APPROVER_KEYS: dir, CONSOLE_APPROVER_PASSPHRASES: passphrases },
      local,
      true,
    );
    expect(signers.map((s) => s.approver)).toEqual(['bob', 'olga']);
  });
});
