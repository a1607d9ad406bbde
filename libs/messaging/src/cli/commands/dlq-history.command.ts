import { Command } from 'commander';
import {
  formatChainCheck,
  formatHistory,
  formatHistoryDetail,
  formatUnfinished,
} from '../format/history-format';
import { AuditChainBrokenError } from '../audit-chain-broken.error';
import { CommandContext } from './command-context';
import { withLocalPlaintextOption } from './next-command';

interface HistoryFlags {
  readonly source?: string;
  readonly limit: string;
  readonly verbose?: boolean;
  readonly verify?: boolean;
  readonly localPlaintext?: boolean;
}

/**
 * `nest-messaging dlq history [--source <dlq>] [--limit 50] [--verbose] [--verify] [--local-plaintext]`: the
 * redrive audit log.
 */
export function historyCommand(context: CommandContext): Command {
  return withLocalPlaintextOption(new Command('history'))
    .description('show the audit log: every plan, approval, redrive and refusal, oldest first')
    .option('--source <dlq>', 'only this dead-letter destination')
    .option('--limit <n>', 'the latest n entries', '50')
    .option('--verbose', 'also each entry’s detail and message ids')
    .option('--verify', 'check the whole log’s hash chain and list every break (exit 1 when it is broken)')
    .action(async (flags: HistoryFlags) => {
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new Error('--limit is a whole number from 1.');
      await context.withLedger(async (ledger) => {
        const entries = await ledger.history({ source: flags.source, limit });
        context.print(formatHistory(entries));
        const unfinished = formatUnfinished(entries);
        if (unfinished.length > 0) context.print(['', ...unfinished]);
        if (flags.verbose) context.print(['', ...formatHistoryDetail(entries)]);
        if (!flags.verify) return;
        const check = await ledger.verifyChain();
        context.print(['', ...formatChainCheck(check, await ledger.rewriteRights())]);
        if (!check.intact) {
          throw new AuditChainBrokenError(
            check.brokenAt,
            check.reason,
            check.breaks.map((b) => b.entry),
          );
        }
      });
    });
}
