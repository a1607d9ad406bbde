import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../../../tools/demo/build-services';

/** Guide 08's local redrive, the block it includes verbatim: run as written, plan to execute. */
export const LOCAL_REDRIVE_SCRIPT = path.join(REPO_ROOT, 'examples', 'five-minute', 'local-redrive.sh');

/** What the test fills in: the block's documented placeholders, and an admin database of the cell's own. */
export interface LocalRedriveFill {
  /** Replaces `messaging_admin`: the matrix's PostgreSQL is shared, so each cell's admin database is its own. */
  readonly adminDatabase: string;
  /** `<your account>`: the account the CLI acts as (the user in AMQP_URL; on Kafka without SASL, `whoami`). */
  readonly account: string;
  /** `…` in `MESSAGING_KEY_SECRET=…`: the services' key secret. */
  readonly keySecret: string;
}

/**
 * Runs the block in one bash, as a developer types it: up to `approver keygen`, then, with the keyring entry
 * keygen printed pasted in for `<jane's entry>`, the rest. `set -e`: the first failing command ends it.
 * Resolves with everything it printed; rejects with it when a command fails.
 */
export async function runLocalRedrive(
  cwd: string,
  env: NodeJS.ProcessEnv,
  fill: LocalRedriveFill,
): Promise<string> {
  const script = await fs.readFile(LOCAL_REDRIVE_SCRIPT, 'utf8');
  const lines = script.split('\n');
  const keygen = lines.findIndex((line) => line.includes('nest-messaging approver keygen --name jane'));
  if (keygen < 0) throw new Error(`${LOCAL_REDRIVE_SCRIPT}: no \`approver keygen --name jane\` line`);
  const head = placeholder(lines.slice(0, keygen + 1).join('\n'), /\bmessaging_admin\b/g, fill.adminDatabase);

  const bash = spawn('bash', ['--noprofile', '--norc', '-e'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const listeners: Array<() => void> = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    listeners.forEach((listener) => listener());
  };
  bash.stdout.on('data', onData);
  bash.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) => bash.on('exit', (code) => resolve(code)));
  const failed = (why: string) => new Error(`The guide's local redrive ${why}:\n${output.slice(-8000)}`);
  const timer = setTimeout(() => bash.kill('SIGKILL'), 5 * 60_000);
  try {
    const marker = '::head-done';
    bash.stdin.write(`${head}\necho ${marker}\n`);
    const headDone = new Promise<void>((resolve) =>
      listeners.push(() => output.includes(marker) && resolve()),
    );
    if ((await Promise.race([headDone.then(() => 'done'), exited])) !== 'done') {
      throw failed('stopped before keygen printed its entry');
    }
    const entry = output
      .split('\n')
      .map((line) => line.trim())
      .find((line) => line.startsWith('{"name":"jane"'));
    if (!entry) throw failed("printed no keyring entry for jane at keygen's");
    let tail = lines.slice(keygen + 1).join('\n');
    tail = placeholder(tail, /<jane's entry>/g, entry);
    tail = placeholder(tail, /<your account>/g, fill.account);
    tail = placeholder(tail, /MESSAGING_KEY_SECRET=…/g, `MESSAGING_KEY_SECRET='${fill.keySecret}'`);
    bash.stdin.end(`${tail}\nexit\n`);
    const code = await exited;
    if (code !== 0) throw failed(`exited with ${String(code)}`);
    return output;
  } finally {
    clearTimeout(timer);
    if (bash.exitCode === null) bash.kill('SIGKILL');
  }
}

/** `text` with `pattern` replaced; the placeholder must be there (the block changed if it is not). */
function placeholder(text: string, pattern: RegExp, value: string): string {
  if (!pattern.test(text)) throw new Error(`${LOCAL_REDRIVE_SCRIPT}: the placeholder ${pattern} is gone`);
  pattern.lastIndex = 0;
  return text.replace(pattern, () => value);
}
