import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApproverKeyring } from '../../redrive/approvals/approver-keyring';
import { CliIo } from '../cli-io';
import { runMessagingCli } from '../messaging-cli';
import { nextCommand } from './next-command';

/** Issue 37 item 3: the local redrive's commands are consistent, and say what the next step needs. */
describe('the dlq commands in local development (issue 37 item 3)', () => {
  let folder: string;

  async function cli(args: string[], env: Record<string, string> = {}) {
    let out = '';
    let err = '';
    const io: CliIo = { env, out: (t) => void (out += t), err: (t) => void (err += t), cwd: folder };
    return { code: await runMessagingCli(args, io), out, err };
  }

  beforeAll(() => (folder = mkdtempSync(path.join(os.tmpdir(), 'next-command-'))));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  describe(nextCommand.name, () => {
    it('carries --local-plaintext (flag or variable) and --topology on to the next command', () => {
      const args = ['--plan', 'plan.json', '--approval', 'plan.approval.json'];
      expect(nextCommand('redrive', args, {}, {})).toBe(
        'nest-messaging dlq redrive --plan plan.json --approval plan.approval.json',
      );
      expect(nextCommand('redrive', args, { localPlaintext: true }, {})).toBe(
        'nest-messaging dlq redrive --plan plan.json --approval plan.approval.json --local-plaintext',
      );
      expect(
        nextCommand(
          'approve',
          ['--plan', 'p.json'],
          { topology: 't.json' },
          {
            MESSAGING_ADMIN_LOCAL_PLAINTEXT: 'true',
          },
        ),
      ).toBe('nest-messaging dlq approve --plan p.json --topology t.json --local-plaintext');
    });
  });

  it('every dlq subcommand takes --local-plaintext (history and approve need no broker, but accept it)', async () => {
    for (const sub of ['list', 'plan', 'approve', 'redrive', 'history']) {
      const help = await cli(['dlq', sub, '--help']);
      expect(help.out).toContain('--local-plaintext');
    }
    // Without the admin database, history says what is missing, not that the flag is unknown.
    const history = await cli(['dlq', 'history', '--local-plaintext']);
    expect(history.code).toBe(1);
    expect(history.err).not.toContain('unknown option');
    expect(history.err).toContain('MESSAGING_ADMIN_DATABASE_URL');
  });

  it('approver keygen prints a keyring entry of version 2 and says MESSAGING_ADMIN_APPROVERS is its path', async () => {
    const keygen = await cli(['approver', 'keygen', '--name', 'jane.doe']);
    expect(keygen.code).toBe(0);
    expect(keygen.out).toContain('"version": 2');
    expect(keygen.out).not.toContain('"version": 1');
    expect(keygen.out).toMatch(/MESSAGING_ADMIN_APPROVERS is the path to it/);
    const entry = keygen.out.split('\n').find((line) => line.startsWith('{"name"'));
    expect(entry).toBeDefined();
    // The entry, pasted into the keyring the guide documents, reads as an approver with a key.
    const keyring = ApproverKeyring.parse({ version: 2, people: [JSON.parse(entry!)] });
    expect(keyring.hasIdentityMap).toBe(true);
    expect(keyring.publicKeyOf('jane.doe')).toBeDefined();
  });
});
