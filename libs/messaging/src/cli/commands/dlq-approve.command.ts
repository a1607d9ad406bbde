import { Command } from 'commander';
import { parseRedrivePlan } from '../../dead-letter/redrive/redrive-plan.schema';
import { BrokerFlags } from '../admin-options';
import { readJson, writeJson } from '../cli-io';
import { parseDuration } from '../duration';
import { formatPlan } from '../format/plan-format';
import { CommandContext, withBrokerOptions } from './command-context';

interface ApproveFlags extends BrokerFlags {
  readonly plan: string;
  readonly approver: string;
  readonly ttl: string;
  readonly out?: string;
}

/** `nest-messaging dlq approve --plan plan.json --approver NAME [--ttl 15m] [--out approval.json]`. */
export function approveCommand(context: CommandContext): Command {
  return withBrokerOptions(new Command('approve'))
    .description('approve a plan for a limited time (signed with the admin credential)')
    .requiredOption('--plan <file>', 'the plan written by "dlq plan --out"')
    .requiredOption('--approver <name>', 'who approves')
    .option('--ttl <duration>', 'how long the approval is valid, e.g. 15m or 1h (at most 24h)', '15m')
    .option('--out <file>', 'where to write the approval (default: <plan file>.approval.json)')
    .action(async (flags: ApproveFlags) => {
      const plan = parseRedrivePlan(await readJson(context.io, flags.plan));
      const ttlMs = parseDuration(flags.ttl);
      const approval = await context.withService(flags, async (service) =>
        service.issueApproval(plan, { approver: flags.approver, ttlMs }),
      );
      const out = flags.out ?? `${flags.plan.replace(/\.json$/, '')}.approval.json`;
      await writeJson(context.io, out, approval);
      context.print([
        ...formatPlan(plan, 'approval'),
        '',
        `Approved by ${approval.approver} until ${approval.expiresAt}. Approval written to ${out}.`,
        `Next: nest-messaging dlq redrive --plan ${flags.plan} --approval ${out}`,
      ]);
    });
}
