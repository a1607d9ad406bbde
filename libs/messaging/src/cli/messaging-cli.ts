import { Command, CommanderError } from 'commander';
import { ZodError } from 'zod';
import { RedriveRefusedError } from '../redrive/errors/redrive-refused.error';
import { printableLines } from '../common/printable';
import { CliIo, processIo } from './cli-io';
import { approverKeygenCommand } from './commands/approver-keygen.command';
import { commandContext } from './commands/command-context';
import { dbCommand } from './commands/db-migrate.command';
import { approveCommand } from './commands/dlq-approve.command';
import { historyCommand } from './commands/dlq-history.command';
import { listCommand } from './commands/dlq-list.command';
import { planCommand } from './commands/dlq-plan.command';
import { editCommand } from './commands/dlq-edit.command';
import { redriveCommand } from './commands/dlq-redrive.command';
import { relayCommand } from './commands/relay-slot.command';
import { replayCommand } from './commands/replay.command';
import { topologyCommand } from './commands/topology.command';
import { ExitCode } from './exit-codes';

/**
 * The `nest-messaging` program: `dlq list | plan | approve | redrive | history`, `approver keygen`,
 * `topology apply | check`, `db migrate`.
 */
export function messagingProgram(io: CliIo): Command {
  const context = commandContext(io);
  const dlq = new Command('dlq')
    .description(
      'dead-letter destinations: list them, plan a redrive (dry run), approve it, run it, audit it',
    )
    .addCommand(listCommand(context))
    .addCommand(planCommand(context))
    .addCommand(editCommand(context))
    .addCommand(approveCommand(context))
    .addCommand(redriveCommand(context))
    .addCommand(historyCommand(context));
  const approver = new Command('approver')
    .description('approver keys: each approver signs with a key of their own')
    .addCommand(approverKeygenCommand(context));
  const program = new Command('nest-messaging')
    .description('Admin operations of the messaging library')
    .addCommand(dlq)
    .addCommand(replayCommand(context))
    .addCommand(approver)
    .addCommand(topologyCommand(context))
    .addCommand(dbCommand(context))
    .addCommand(relayCommand(context));
  throwInsteadOfExit(program, io);
  return program;
}

/** Commander exits the process on errors and help by default; this CLI returns an exit code instead. */
function throwInsteadOfExit(command: Command, io: CliIo): void {
  command
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.out(text), writeErr: (text) => io.err(text) });
  command.commands.forEach((sub) => throwInsteadOfExit(sub, io));
}

/**
 * Runs the CLI on `argv` (the arguments after the program name) and resolves with its exit code:
 * 0 done, 2 refused by a redrive guard, 1 any other failure.
 */
export async function runMessagingCli(argv: readonly string[], given: CliIo = processIo()): Promise<number> {
  const io = printableIo(given);
  try {
    await messagingProgram(io).parseAsync(argv, { from: 'user' });
    return ExitCode.OK;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.OK : ExitCode.ERROR;
    if (error instanceof RedriveRefusedError) {
      io.err(`Refused: ${error.message}\n`);
      return ExitCode.REFUSED;
    }
    io.err(`Error: ${describe(error)}\n`);
    return ExitCode.ERROR;
  }
}

/**
 * The CLI's output, every line through the printable filter: refusals and errors quote names read from the
 * DLQ (a planted `msg.origin-destination`), and plans show its headers; none reaches the terminal raw.
 */
function printableIo(io: CliIo): CliIo {
  return {
    ...io,
    out: (text) => io.out(printableLines(text)),
    err: (text) => io.err(printableLines(text)),
  };
}

function describe(error: unknown): string {
  if (error instanceof ZodError) {
    return `the file is not one this CLI wrote or reads (${error.issues.map((i) => i.path.join('.')).join(', ')}).`;
  }
  return error instanceof Error ? error.message : String(error);
}
