import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import { BrokerFlags } from '../admin-options';
import { CliUsageError } from '../cli-usage.error';
import { writeJson } from '../cli-io';
import { formatPlan } from '../format/plan-format';
import {
  AppendOnlyFlag,
  CommandContext,
  withAppendOnlyOption,
  withBrokerOptions,
  withTopologyOption,
} from './command-context';
import { nextCommand } from './next-command';

interface EditFlags extends BrokerFlags, AppendOnlyFlag {
  readonly source: string;
  readonly id: string;
  readonly payload: string;
  readonly header?: string[];
  readonly removeHeader?: string[];
  readonly events?: string;
  readonly withoutSchema?: boolean;
  readonly out?: string;
  readonly topology?: string;
}

/** `name=value` pairs and names to remove, as an edit's header changes. */
export function headerChangesOf(set: readonly string[] = [], remove: readonly string[] = []) {
  const changes: Record<string, string | null> = {};
  for (const pair of set) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CliUsageError(`--header ${pair}: give name=value`);
    changes[pair.slice(0, at)] = pair.slice(at + 1);
  }
  for (const name of remove) changes[name] = null;
  return changes;
}

/**
 * `nest-messaging dlq edit --source X --id <message id> --payload edited.json [--header name=value...]
 * [--remove-header name...] [--events contracts.js | --without-schema] [--out plan.json]`: plans an edit of
 * one dead letter. It is approved (`dlq approve`) and executed (`dlq redrive`) like any plan.
 */
export function editCommand(context: CommandContext): Command {
  return withAppendOnlyOption(withTopologyOption(withBrokerOptions(new Command('edit'))))
    .description('plan an edit of one dead letter: its payload (and carried headers), checked by its schema')
    .requiredOption('--source <dlq>', 'the dead-letter destination, <destination>.<group>.dlq')
    .requiredOption('--id <messageId>', 'the msg.id of the dead letter to edit')
    .requiredOption('--payload <file>', 'the whole edited payload, a JSON file')
    .option(
      '--header <name=value...>',
      'set a header the redriven copy carries (MESSAGING_ADMIN_CARRY_HEADERS)',
    )
    .option('--remove-header <name...>', 'remove such a header')
    .option(
      '--events <module>',
      'a compiled module exporting the event definitions (defineEvent) to check with',
    )
    .option(
      '--without-schema',
      'plan it although no definition of its type is known: the approver sees it unvalidated',
    )
    .option('--out <file>', 'write the plan to this file, for approve and redrive')
    .action(async (flags: EditFlags) => {
      const payload = await fs.readFile(path.resolve(context.io.cwd, flags.payload), 'utf8');
      const headers = headerChangesOf(flags.header, flags.removeHeader);
      const plan = await context.withService(
        flags,
        async (service) => {
          const [found] = await service.search(flags.source, { messageId: flags.id });
          if (!found) {
            throw new CliUsageError(
              `No message ${flags.id} among the first messages of ${flags.source} (dlq list, the console's search).`,
            );
          }
          return service.planEdit({
            source: flags.source,
            position: found.message.position,
            messageId: flags.id,
            payload,
            headers,
            withoutSchema: flags.withoutSchema === true,
          });
        },
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
        context.print([`Edit plan written to ${flags.out}. Next, by an approver (not you): ${next}`]);
      }
    });
}
