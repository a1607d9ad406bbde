import { Command } from 'commander';
import { parseRedriveApproval, parseRedrivePlan } from '../../redrive/redrive-plan.schema';
import { BrokerFlags } from '../admin-options';
import { readJson } from '../cli-io';
import { formatBulkResult, formatProgress } from '../format/bulk-format';
import { formatResult } from '../format/result-format';
import { RedriveIncompleteError } from '../redrive-incomplete.error';
import {
  AppendOnlyFlag,
  CommandContext,
  withAppendOnlyOption,
  withBrokerOptions,
  withTopologyOption,
} from './command-context';

interface RedriveFlags extends BrokerFlags, AppendOnlyFlag {
  readonly plan: string;
  readonly approval: string;
  readonly topology?: string;
}

/** `nest-messaging dlq redrive --plan plan.json --approval approval.json`: moves the approved plan's messages. */
export function redriveCommand(context: CommandContext): Command {
  return withAppendOnlyOption(withTopologyOption(withBrokerOptions(new Command('redrive'))))
    .description('move the messages of an approved plan: publish, wait for confirms, then settle')
    .requiredOption('--plan <file>', 'the plan written by "dlq plan --out"')
    .requiredOption('--approval <file>', 'the approval written by "dlq approve"')
    .action(async (flags: RedriveFlags) => {
      const plan = parseRedrivePlan(await readJson(context.io, flags.plan));
      const approval = parseRedriveApproval(await readJson(context.io, flags.approval));
      if (plan.bulk) {
        // A plan at scale: progress after each chunk; run the same command again to resume after a crash.
        const result = await context.withService(
          flags,
          async (service) =>
            service.executeBulk(await service.approve(plan, approval), {
              onProgress: (p) => context.print([formatProgress(p)]),
            }),
          { source: plan.source },
        );
        context.print(formatBulkResult(result));
        if (result.leftInSource > 0) {
          throw new RedriveIncompleteError(result.leftInSource, result.source, result.target);
        }
        return;
      }
      const result = await context.withService(
        flags,
        async (service) => service.execute(await service.approve(plan, approval)),
        { source: plan.source },
      );
      context.print(formatResult(result));
      if (result.leftInSource > 0) {
        throw new RedriveIncompleteError(result.leftInSource, result.source, result.target);
      }
    });
}
