import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CliIo } from '../cli-io';
import { runMessagingCli } from '../messaging-cli';

/** Issue 45 finding 14: keygen without a passphrase says the key is not encrypted, not only its mode. */
describe('nest-messaging approver keygen', () => {
  let folder: string;

  async function keygen(name: string, env: Record<string, string>) {
    let out = '';
    const io: CliIo = { env, out: (t) => void (out += t), err: () => undefined, cwd: folder };
    return { code: await runMessagingCli(['approver', 'keygen', '--name', name], io), out };
  }

  beforeAll(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'approver-keygen-'));
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('says a key made without a passphrase is not encrypted, and how to make an encrypted one', async () => {
    const plain = await keygen('jane', {});
    expect(plain.code).toBe(0);
    expect(plain.out).toContain('It is NOT encrypted: anyone who can read jane.approver-key.json can sign');
    expect(plain.out).toContain('MESSAGING_APPROVER_KEY_PASSPHRASE');
    const encrypted = await keygen('bob', { MESSAGING_APPROVER_KEY_PASSPHRASE: 'correct horse' });
    expect(encrypted.code).toBe(0);
    expect(encrypted.out).toContain('(mode 0600, encrypted)');
    expect(encrypted.out).not.toContain('NOT encrypted');
  });
});
