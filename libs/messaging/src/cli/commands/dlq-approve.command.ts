import { Command } from 'commander';
import { readApproverSigner } from '../../redrive/approvals/approver-keys';
import { issueApproval } from '../../redrive/issue-approval';
import { parseRedrivePlan } from '../../redrive/redrive-plan.schema';
import { AdminEnv } from '../admin-options';
import { readApproverKeyFile } from '../approver-key-file';
import { cliClock, readJson, writeJson } from '../cli-io';
import { parseDuration } from '../duration';
import { formatPlan } from '../format/plan-format';
import { AppendOnlyFlag, CommandContext, withAppendOnlyOption, withTopologyOption } from './command-context';
import { nextCommand, withLocalPlaintextOption } from './next-command';

interface ApproveFlags extends AppendOnlyFlag {
  readonly plan: string;
  readonly key: string;
  readonly ttl: string;
  readonly out?: string;
  readonly topology?: string;
  readonly localPlaintext?: boolean;
}

/**
 * `nest-messaging dlq approve --plan plan.json --key <name>.approver-key.json [--ttl 15m] [--out approval.json]
 * [--topology file] [--local-plaintext]`.
 */
export function approveCommand(context: CommandContext): Command {
  return withAppendOnlyOption(withLocalPlaintextOption(withTopologyOption(new Command('approve'))))
    .description('approve a plan for a limited time, signed with your own approver key (no broker access)')
    .requiredOption('--plan <file>', 'the plan written by "dlq plan --out"')
    .requiredOption(
      '--key <file>',
      `your private key file (nest-messaging approver keygen); passphrase in ${AdminEnv.APPROVER_KEY_PASSPHRASE}`,
    )
    .option('--ttl <duration>', 'how long the approval is valid, e.g. 15m or 1h (at most 24h)', '15m')
    .option('--out <file>', 'where to write the approval (default: <plan file>.approval.json)')
    .action(async (flags: ApproveFlags) => {
      const signer = readApproverSigner(
        await readApproverKeyFile(context.io, flags.key),
        context.io.env[AdminEnv.APPROVER_KEY_PASSPHRASE],
      );
      const plan = parseRedrivePlan(await readJson(context.io, flags.plan));
      const ttlMs = parseDuration(flags.ttl);
      const keyring = await context.keyring();
      const topology = await context.topology(flags);
      const approval = await context.withAppendOnlyLedger(flags, (ledger) =>
        issueApproval(plan, signer, { ledger, ttlMs, keyring, topology, clock: cliClock(context.io) }),
      );
      const out = flags.out ?? `${flags.plan.replace(/\.json$/, '')}.approval.json`;
      await writeJson(context.io, out, approval);
      context.print([
        ...formatPlan(plan, 'approval'),
        '',
        `Checked: the route is the one ${plan.source} derives${topology ? ' (with the topology)' : ''}, ` +
          `and the audit log has this plan, made by ${plan.plannedBy}.`,
        `Approved by ${approval.approver} until ${approval.expiresAt}. Approval written to ${out}.`,
        `Next, by another admin than the approver: ${nextCommand('redrive', ['--plan', flags.plan, '--approval', out], flags, context.io.env)}`,
      ]);
    });
}
