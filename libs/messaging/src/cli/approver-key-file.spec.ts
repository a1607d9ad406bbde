import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateApproverKeys } from '../redrive/approvals/approver-keys';
import { readApproverKeyFile } from './approver-key-file';
import { CliIo } from './cli-io';
import { runMessagingCli } from './messaging-cli';

/**
 * Issue 45 finding 14: `dlq approve --key` refuses a private key file its group or others may read, or that
 * another user owns, as ssh does, and says how to fix it (chmod 600).
 */
describe('approver key file: owner and mode', () => {
  let folder: string;
  let io: CliIo;
  const isPosix = process.platform !== 'win32';

  function keyFile(name: string, mode: number): string {
    const file = path.join(folder, name);
    writeFileSync(file, JSON.stringify(generateApproverKeys('jane').privateKeyFile));
    chmodSync(file, mode);
    return name;
  }

  beforeAll(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'approver-key-file-'));
    io = { env: {}, out: () => undefined, err: () => undefined, cwd: folder };
  });
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  // claim: C-113
  (isPosix ? it : it.skip)(
    '`dlq approve` refuses a key file others can read, naming chmod 600, exit 1',
    async () => {
      for (const mode of [0o644, 0o640, 0o604, 0o660, 0o602]) {
        const file = keyFile(`open-${mode.toString(8)}.approver-key.json`, mode);
        let err = '';
        const code = await runMessagingCli(['dlq', 'approve', '--plan', 'plan.json', '--key', file], {
          ...io,
          err: (t) => void (err += t),
        });
        expect(code).toBe(1);
        expect(err).toContain(`mode 0${mode.toString(8)}`);
        expect(err).toContain(`chmod 600 ${file}`);
        expect(err).not.toContain('BEGIN');
      }
    },
  );

  (isPosix ? it : it.skip)('reads a key file of mode 0600 or 0400 owned by the current user', async () => {
    for (const mode of [0o600, 0o400]) {
      const file = keyFile(`own-${mode.toString(8)}.approver-key.json`, mode);
      await expect(readApproverKeyFile(io, file)).resolves.toMatchObject({ approver: 'jane' });
    }
  });

  // claim: C-113
  (isPosix ? it : it.skip)('refuses a key file another user owns', async () => {
    const file = keyFile('other.approver-key.json', 0o600);
    const otherUid = (process.getuid?.() ?? 0) + 1;
    await expect(readApproverKeyFile(io, file, otherUid)).rejects.toThrow(
      new RegExp(`owned by another user .*chmod 600 ${file.replace(/\./g, '\\.')}`),
    );
  });
});
