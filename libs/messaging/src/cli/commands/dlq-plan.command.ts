import { Command } from 'commander';
import { BrokerFlags } from '../admin-options';
import { writeJson } from '../cli-io';
import { CliUsageError } from '../cli-usage.error';
import { formatPlan } from '../format/plan-format';
import { selectionOf } from './plan-selection-flags';
import {
  AppendOnlyFlag,
  CommandContext,
  withAppendOnlyOption,
  withBrokerOptions,
  withTopologyOption,
} from './command-context';
import { nextCommand } from './next-command';

interface PlanFlags extends BrokerFlags, AppendOnlyFlag {
  readonly source: string;
  readonly target?: string;
  readonly limit?: string;
  readonly out?: string;
  readonly topology?: string;
  readonly ids?: string;
  readonly category?: string;
  readonly code?: string;
  readonly type?: string;
  readonly olderThan?: string;
  readonly discard?: boolean;
  readonly all?: boolean;
}

/**
 * `nest-messaging dlq plan --source X [--target Y] [--limit N] [--ids a,b | --code C --category K --type T
 * --older-than 30m] [--discard] [--out plan.json]`: a dry run.
 */
export function planCommand(context: CommandContext): Command {
  return withAppendOnlyOption(withTopologyOption(withBrokerOptions(new Command('plan'))))
    .description('dry run: show what a redrive would move; changes nothing')
    .requiredOption('--source <dlq>', 'the dead-letter destination, <destination>.<group>.dlq')
    .option(
      '--target <name>',
      'only as a check: the target is derived (RabbitMQ the work queue, Kafka the origin topic)',
    )
    .option('--limit <n>', 'at most this many messages (default and maximum 100)')
    .option('--ids <ids>', 'only these message ids (comma-separated), wherever they are in the DLQ')
    .option('--category <category>', 'only messages of this failure category, e.g. TRANSIENT')
    .option(
      '--code <code>',
      'only messages of this failure code, e.g. QueryFailedError/P0001 (a group: with --category)',
    )
    .option('--type <type>', 'only messages of this event type')
    .option('--older-than <duration>', 'only messages whose last failure is at least this old, e.g. 30m')
    .option('--discard', 'archive the messages in <dlq>.archive instead of redriving them (they never run)')
    .option(
      '--all',
      'a plan at scale: every message of the selection, however many (no --limit), kept in the admin database',
    )
    .option('--out <file>', 'write the plan to this file, for approve and redrive')
    .action(async (flags: PlanFlags) => {
      const limit = flags.limit === undefined ? undefined : Number(flags.limit);
      const selection = selectionOf(flags);
      const action = flags.discard ? ('discard' as const) : undefined;
      if (flags.all && (selection === undefined || limit !== undefined)) {
        throw new CliUsageError(
          '--all plans a selection (--ids, --category, --code, --type, --older-than), without --limit.',
        );
      }
      const request = { source: flags.source, target: flags.target, action };
      const plan = await context.withService(
        flags,
        (service) =>
          flags.all && selection
            ? service.planBulk({ ...request, selection })
            : service.plan({ ...request, limit, selection }),
        { source: flags.source },
      );
      context.print(formatPlan(plan));
      if (flags.out) {
        await writeJson(context.io, flags.out, plan);
        const next = nextCommand(
          'approve',
          ['--plan', flags.out, '--key', '<name>.approver-key.json'],
          flags,
          context.io.env,
        );
        context.print([`Plan written to ${flags.out}. Next, by an approver: ${next}`]);
      }
    });
}
