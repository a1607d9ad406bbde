import { Command } from 'commander';
import { formatHistory, formatHistoryDetail } from '../format/history-format';
import { CommandContext } from './command-context';

interface HistoryFlags {
  readonly source?: string;
  readonly limit: string;
  readonly verbose?: boolean;
}

/** `nest-messaging dlq history [--source <dlq>] [--limit 50] [--verbose]`: the redrive audit log. */
export function historyCommand(context: CommandContext): Command {
  return new Command('history')
    .description('show the audit log: every plan, approval, redrive and refusal, oldest first')
    .option('--source <dlq>', 'only this dead-letter destination')
    .option('--limit <n>', 'the latest n entries', '50')
    .option('--verbose', 'also each entry’s detail and message ids')
    .action(async (flags: HistoryFlags) => {
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new Error('--limit is a whole number from 1.');
      const entries = await context.withLedger((ledger) => ledger.history({ source: flags.source, limit }));
      context.print(formatHistory(entries));
      if (flags.verbose) context.print(['', ...formatHistoryDetail(entries)]);
    });
}
