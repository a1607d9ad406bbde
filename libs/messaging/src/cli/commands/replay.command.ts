import { Command } from 'commander';
import { parseRedriveApproval } from '../../redrive/redrive-plan.schema';
import { RedriveService } from '../../redrive/redrive.service';
import { replayDetail, ReplayInboxMode, ReplayPlan } from '../../redrive/replay/replay-plan';
import { parseReplayPlan } from '../../redrive/replay/replay-plan.schema';
import { ReplayResult, ReplayService } from '../../redrive/replay/replay.service';
import { parseOffsetWindows } from '../../redrive/replay/replay-window';
import { BrokerFlags } from '../admin-options';
import { readJson, writeJson } from '../cli-io';
import { CliUsageError } from '../cli-usage.error';
import {
  AppendOnlyFlag,
  CommandContext,
  withAppendOnlyOption,
  withBrokerOptions,
  withTopologyOption,
} from './command-context';
import { approvalCommand } from './approval-command';
import { isLocalPlaintext } from './next-command';

interface ReplayPlanFlags extends BrokerFlags, AppendOnlyFlag {
  readonly topic?: string;
  readonly destination?: string;
  readonly group: string;
  readonly from?: string;
  readonly to?: string;
  readonly offsets?: string;
  readonly inbox: string;
  readonly rate?: string;
  readonly out?: string;
  readonly topology?: string;
}

interface ReplayRunFlags extends BrokerFlags, AppendOnlyFlag {
  readonly plan: string;
  readonly approval: string;
  readonly topology?: string;
}

/**
 * `nest-messaging replay plan | approve | run`: replay a Kafka topic's window (or a RabbitMQ destination's,
 * from its journal) to one consumer group, with
 * four eyes and the audit log of a redrive (docs/guide/08-redrive.md, Replay a window).
 */
export function replayCommand(context: CommandContext): Command {
  return new Command('replay')
    .description(
      "replay a Kafka topic's window (a RabbitMQ destination's, from its journal) to one consumer group: plan, approve, run",
    )
    .addCommand(replayPlanCommand(context))
    .addCommand(replayApproveCommand(context))
    .addCommand(replayRunCommand(context));
}

function replayPlanCommand(context: CommandContext): Command {
  return withAppendOnlyOption(withTopologyOption(withBrokerOptions(new Command('plan'))))
    .description('dry run: resolve the window and show what a replay would publish; changes nothing')
    .option('--topic <topic>', 'the topic whose records are replayed (Kafka)')
    .option('--destination <name>', 'the destination whose journal is read (RabbitMQ; same as --topic)')
    .requiredOption('--group <group>', 'the one consumer group that gets them again')
    .option('--from <time>', 'the first record at or after this time (ISO 8601)')
    .option('--to <time>', 'up to the first record at or after this time (ISO 8601), exclusive')
    .option(
      '--offsets <windows>',
      "offsets per partition instead of times: 0:120-180,2:40-41 (end exclusive; RabbitMQ: the journal's, 0:<from>-<to>)",
    )
    .requiredOption(
      '--inbox <mode>',
      "'skip': the group's inbox drops what it handled; 'reprocess': applied again, once per replay",
    )
    .option('--rate <n>', 'at most this many messages per second (default 100)')
    .option('--out <file>', 'write the plan to this file, for replay approve and replay run')
    .action(async (flags: ReplayPlanFlags) => {
      const topic = flags.topic ?? flags.destination;
      if (topic === undefined || (flags.topic !== undefined && flags.destination !== undefined)) {
        throw new CliUsageError('Give --topic (Kafka) or --destination (RabbitMQ).');
      }
      const inbox = inboxMode(flags.inbox);
      const ratePerSecond = flags.rate === undefined ? undefined : Number(flags.rate);
      const request = flags.offsets
        ? { offsets: parseOffsetWindows(flags.offsets) }
        : { from: timeOf('--from', flags.from), to: timeOf('--to', flags.to) };
      if (flags.offsets && (flags.from || flags.to)) {
        throw new CliUsageError('Give --from and --to, or --offsets, not both.');
      }
      const plan = await context.withService(
        flags,
        (service) =>
          withReplays(service, (replays) =>
            replays.plan({ topic, group: flags.group, inbox, ratePerSecond, ...request }),
          ),
        { source: topic },
      );
      context.print(formatReplayPlan(plan));
      if (flags.out) {
        await writeJson(context.io, flags.out, plan);
        const next = replayNext(
          'approve',
          ['--plan', flags.out, '--key', '<name>.approver-key.json'],
          flags,
          context,
        );
        context.print([`Plan written to ${flags.out}. Next, by an approver: ${next}`]);
      }
    });
}

function replayApproveCommand(context: CommandContext): Command {
  return approvalCommand(context, {
    description:
      'approve a replay plan for a limited time, signed with your own approver key (no broker access)',
    planFrom: 'the plan written by "replay plan --out"',
    parse: parseReplayPlan,
    shown: formatReplayPlan,
    checked: (plan) => `Checked: the audit log has this plan, made by ${plan.plannedBy}.`,
    next: (flags, approvalFile) =>
      replayNext('run', ['--plan', flags.plan, '--approval', approvalFile], flags, context),
  });
}

function replayRunCommand(context: CommandContext): Command {
  return withAppendOnlyOption(withTopologyOption(withBrokerOptions(new Command('run'))))
    .description('publish the copies of an approved replay plan, at its rate, to its group only')
    .requiredOption('--plan <file>', 'the plan written by "replay plan --out"')
    .requiredOption('--approval <file>', 'the approval written by "replay approve"')
    .action(async (flags: ReplayRunFlags) => {
      const plan = parseReplayPlan(await readJson(context.io, flags.plan));
      const approval = parseRedriveApproval(await readJson(context.io, flags.approval));
      const result = await context.withService(
        flags,
        (service) =>
          withReplays(service, async (replays) => replays.execute(await replays.approve(plan, approval))),
        { source: plan.source },
      );
      context.print(formatReplayResult(result));
      if (!result.complete) {
        throw new Error(
          `the replay stopped before the end of its window (a copy was not confirmed); run the plan again ` +
            'with a new approval: the inbox drops what this run applied',
        );
      }
    });
}

async function withReplays<T>(
  service: RedriveService,
  work: (replays: ReplayService) => Promise<T>,
): Promise<T> {
  const replays = service.replays();
  try {
    return await work(replays);
  } finally {
    await replays.close();
  }
}

function inboxMode(text: string): ReplayInboxMode {
  if (text === 'skip' || text === 'reprocess') return text;
  throw new CliUsageError(`--inbox is 'skip' or 'reprocess', not '${text}'.`);
}

function timeOf(flag: string, text: string | undefined): Date {
  if (text === undefined) throw new CliUsageError('Give --from and --to (ISO 8601), or --offsets.');
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) throw new CliUsageError(`${flag} '${text}' is not a time (ISO 8601).`);
  return at;
}

/** `nest-messaging replay <step> …`, carrying `--topology` and `--local-plaintext` on. */
function replayNext(
  step: 'approve' | 'run',
  args: readonly string[],
  flags: { readonly topology?: string; readonly localPlaintext?: boolean },
  context: CommandContext,
): string {
  const carried = [
    ...(flags.topology !== undefined ? ['--topology', flags.topology] : []),
    ...(isLocalPlaintext(flags, context.io.env) ? ['--local-plaintext'] : []),
  ];
  return ['nest-messaging', 'replay', step, ...args, ...carried].join(' ');
}

function formatReplayPlan(plan: ReplayPlan): string[] {
  return [
    `Replay plan ${plan.hash}`,
    `  ${replayDetail(plan)}`,
    `  planned by ${plan.plannedBy} at ${plan.createdAt}`,
    ...plan.partitions.map((p) => `  partition ${p.partition}: offsets ${p.from} to ${p.to} (exclusive)`),
  ];
}

function formatReplayResult(result: ReplayResult): string[] {
  return [
    `Replay ${result.replayId} of ${result.source} to group ${result.group}: ${result.published} published, ` +
      `${result.skipped} skipped${result.complete ? '' : ', INCOMPLETE'}`,
    ...result.partitions.map(
      (p) =>
        `  partition ${p.partition}: ${p.published} published, ${p.skipped} skipped, next offset ${p.next}` +
        (p.error ? ` (stopped: ${p.error})` : ''),
    ),
  ];
}
