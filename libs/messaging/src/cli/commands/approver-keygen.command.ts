import { Command } from 'commander';
import { generateApproverKeys } from '../../redrive/approvals/approver-keys';
import { AdminEnv } from '../admin-options';
import { writeJson } from '../cli-io';
import { CommandContext, writePrivateFile } from './command-context';

interface KeygenFlags {
  readonly name: string;
}

/** `nest-messaging approver keygen --name jane.doe`: an approver's Ed25519 key pair. */
export function approverKeygenCommand(context: CommandContext): Command {
  return new Command('keygen')
    .description('make an approver key pair: keep the private key, give the public one to the executors')
    .requiredOption('--name <approver>', 'the approver’s name, e.g. jane.doe (letters, digits, . _ @ -)')
    .action(async (flags: KeygenFlags) => {
      const passphrase = context.io.env[AdminEnv.APPROVER_KEY_PASSPHRASE];
      const { privateKeyFile, publicKey } = generateApproverKeys(flags.name, passphrase);
      const privateFile = `${flags.name}.approver-key.json`;
      const publicFile = `${flags.name}.approver-public.json`;
      await writePrivateFile(context.io, privateFile, `${JSON.stringify(privateKeyFile, null, 2)}\n`);
      await writeJson(context.io, publicFile, publicKey);
      const entry = { name: flags.name, accounts: [], publicKey: publicKey.publicKey };
      context.print([
        `Private key written to ${privateFile} (mode 0600${passphrase ? ', encrypted' : ''}): keep it to yourself.`,
        ...(passphrase
          ? []
          : [
              `It is NOT encrypted: anyone who can read ${privateFile} can sign approvals as ${flags.name}. ` +
                `Outside local development, make it again with a passphrase in ${AdminEnv.APPROVER_KEY_PASSPHRASE}.`,
            ]),
        `Public key written to ${publicFile}. The executors add this entry to "people" in the approver keyring,`,
        `version 2, with every account ${flags.name} acts under (broker principals, console user names) in "accounts":`,
        '',
        JSON.stringify(entry),
        '',
        `The keyring is a JSON file, { "version": 2, "people": [ <entries like this one> ] }, and`,
        `${AdminEnv.APPROVERS} is the path to it, e.g. ${AdminEnv.APPROVERS}=./approvers.json`,
        '(docs/guide/08-redrive.md, "The identity map").',
      ]);
    });
}
