import { Command } from 'commander';
import { AdminEnv } from '../admin-options';

/** How the command that printed a "Next:" line ran: what the next one must repeat. */
export interface NextCommandFlags {
  /** `--local-plaintext`, or `MESSAGING_ADMIN_LOCAL_PLAINTEXT=true`. */
  readonly localPlaintext?: boolean;
  /** `--topology <file>`. */
  readonly topology?: string;
}

/** True when the command runs in local development: the flag, or the variable. */
export function isLocalPlaintext(
  flags: NextCommandFlags,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  return flags.localPlaintext === true || env[AdminEnv.LOCAL_PLAINTEXT] === 'true';
}

/**
 * The `nest-messaging dlq …` command a subcommand prints as its "Next:" line, carrying over what the next
 * step needs of this one's flags (`--topology`, `--local-plaintext`), so that the line runs as printed.
 * The one place every subcommand builds its next command.
 */
export function nextCommand(
  subcommand: 'approve' | 'redrive' | 'history',
  args: readonly string[],
  flags: NextCommandFlags,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const carried = [
    ...(flags.topology !== undefined ? ['--topology', flags.topology] : []),
    ...(isLocalPlaintext(flags, env) ? ['--local-plaintext'] : []),
  ];
  return ['nest-messaging', 'dlq', subcommand, ...args, ...carried].join(' ');
}

/**
 * Adds `--local-plaintext` to a `dlq` subcommand that reaches no broker (approve, history), so that every
 * `dlq` subcommand takes the flag: the "Next:" lines carry it on.
 */
export function withLocalPlaintextOption(command: Command): Command {
  return command.option(
    '--local-plaintext',
    `local development (${AdminEnv.LOCAL_PLAINTEXT}=true), as every dlq command takes it; this one reaches ` +
      'no broker, and carries the flag on to the next command it prints',
  );
}
