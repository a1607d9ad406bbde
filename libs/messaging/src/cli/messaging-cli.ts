import { Command, CommanderError } from 'commander';
import { ZodError } from 'zod';
import { RedriveRefusedError } from '../dead-letter/redrive/errors/redrive-refused.error';
import { CliIo, processIo } from './cli-io';
import { approveCommand } from './commands/dlq-approve.command';
import { commandContext } from './commands/command-context';
import { listCommand } from './commands/dlq-list.command';
import { planCommand } from './commands/dlq-plan.command';
import { redriveCommand } from './commands/dlq-redrive.command';
import { ExitCode } from './exit-codes';

/** The `nest-messaging` program: `nest-messaging dlq list | plan | approve | redrive`. */
export function messagingProgram(io: CliIo): Command {
  const context = commandContext(io);
  const dlq = new Command('dlq')
    .description('dead-letter destinations: list them, plan a redrive (dry run), approve it, run it')
    .addCommand(listCommand(context))
    .addCommand(planCommand(context))
    .addCommand(approveCommand(context))
    .addCommand(redriveCommand(context));
  const program = new Command('nest-messaging')
    .description('Admin operations of the messaging library')
    .addCommand(dlq);
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
export async function runMessagingCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
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

function describe(error: unknown): string {
  if (error instanceof ZodError) {
    return `the file is not a plan or approval written by this CLI (${error.issues.map((i) => i.path.join('.')).join(', ')}).`;
  }
  return error instanceof Error ? error.message : String(error);
}
