import { Command } from 'commander';
import { parseRedrivePlan } from '../../redrive/redrive-plan.schema';
import { formatPlan } from '../format/plan-format';
import { approvalCommand } from './approval-command';
import { CommandContext } from './command-context';
import { nextCommand } from './next-command';

/**
 * `nest-messaging dlq approve --plan plan.json --key <name>.approver-key.json [--ttl 15m] [--out approval.json]
 * [--topology file] [--local-plaintext]`.
 */
export function approveCommand(context: CommandContext): Command {
  return approvalCommand(context, {
    description: 'approve a plan for a limited time, signed with your own approver key (no broker access)',
    planFrom: 'the plan written by "dlq plan --out"',
    parse: parseRedrivePlan,
    shown: (plan) => formatPlan(plan, 'approval'),
    checked: (plan, topology) =>
      `Checked: the route is the one ${plan.source} derives${topology ? ' (with the topology)' : ''}, ` +
      `and the audit log has this plan, made by ${plan.plannedBy}.`,
    next: (flags, approvalFile) =>
      nextCommand('redrive', ['--plan', flags.plan, '--approval', approvalFile], flags, context.io.env),
  });
}
