import { Command } from 'commander';
import { readApproverSigner } from '../../redrive/approvals/approver-keys';
import { issueApproval } from '../../redrive/issue-approval';
import { RedrivePlan } from '../../redrive/redrive-plan';
import { MessagingTopology } from '../../topology/messaging-topology';
import { ReplayPlan } from '../../redrive/replay/replay-plan';
import { AdminEnv } from '../admin-options';
import { readApproverKeyFile } from '../approver-key-file';
import { cliClock, readJson, writeJson } from '../cli-io';
import { parseDuration } from '../duration';
import { AppendOnlyFlag, CommandContext, withAppendOnlyOption, withTopologyOption } from './command-context';
import { withLocalPlaintextOption } from './next-command';

/** The flags of an `approve` command (`dlq approve`, `replay approve`). */
export interface ApproveFlags extends AppendOnlyFlag {
  readonly plan: string;
  readonly key: string;
  readonly ttl: string;
  readonly out?: string;
  readonly topology?: string;
  readonly localPlaintext?: boolean;
}

/** What one kind of plan's `approve` command reads and says; the signing, the checks and the file are shared. */
export interface ApprovalCommandSpec<P extends RedrivePlan | ReplayPlan> {
  readonly description: string;
  /** Where the plan file comes from, e.g. `the plan written by "dlq plan --out"`. */
  readonly planFrom: string;
  parse(json: unknown): P;
  /** The plan as the approver sees it before the approval's lines. */
  shown(plan: P): string[];
  /** What was checked before signing (one line). */
  checked(plan: P, topology: MessagingTopology | undefined): string;
  /** The command the executor runs next, with the plan and the approval file. */
  next(flags: ApproveFlags, approvalFile: string): string;
}

/**
 * `approve --plan plan.json --key <name>.approver-key.json [--ttl 15m] [--out approval.json] [--topology file]
 * [--local-plaintext]`: reads the plan, signs it with the approver's own key once the audit log has its PLAN
 * entry (`issueApproval`), writes the approval beside the plan. No broker access.
 */
export function approvalCommand<P extends RedrivePlan | ReplayPlan>(
  context: CommandContext,
  spec: ApprovalCommandSpec<P>,
): Command {
  return withAppendOnlyOption(withLocalPlaintextOption(withTopologyOption(new Command('approve'))))
    .description(spec.description)
    .requiredOption('--plan <file>', spec.planFrom)
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
      const plan = spec.parse(await readJson(context.io, flags.plan));
      const ttlMs = parseDuration(flags.ttl);
      const keyring = await context.keyring();
      const topology = await context.topology(flags);
      const approval = await context.withAppendOnlyLedger(flags, (ledger) =>
        issueApproval(plan, signer, { ledger, ttlMs, keyring, topology, clock: cliClock(context.io) }),
      );
      const out = flags.out ?? `${flags.plan.replace(/\.json$/, '')}.approval.json`;
      await writeJson(context.io, out, approval);
      context.print([
        ...spec.shown(plan),
        '',
        spec.checked(plan, topology),
        `Approved by ${approval.approver} until ${approval.expiresAt}. Approval written to ${out}.`,
        `Next, by another admin than the approver: ${spec.next(flags, out)}`,
      ]);
    });
}
