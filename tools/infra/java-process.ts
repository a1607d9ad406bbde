/**
 * A JVM the harness runs in the background (the Kafka broker, the Kafka Connect worker): started detached with
 * its output in a log file and its pid in a pid file, stopped with SIGTERM and then SIGKILL, and its log's last
 * lines for error messages. One place for what both need; what "ready" means stays with each.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, promises as fs } from 'node:fs';
import { explainToolFailure } from './kafka-jars';
import { isAlive } from './process-alive';

/** Where a background JVM keeps its output and its pid. */
export interface JavaProcessFiles {
  logFile: string;
  pidFile: string;
}

/**
 * Starts `java args…` detached (it outlives this process), appending its output to `logFile`, and records its
 * pid in `pidFile`. `purpose` completes the error when Java is missing ("Java 17+ runs …").
 */
export async function launchJava(
  files: JavaProcessFiles,
  args: readonly string[],
  purpose: string,
): Promise<number> {
  const out = openSync(files.logFile, 'a');
  try {
    const child = spawn('java', [...args], { detached: true, stdio: ['ignore', out, out] });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid as number));
      child.once('error', (error) => reject(explainToolFailure('java', error, purpose)));
    });
    child.unref();
    await fs.writeFile(files.pidFile, `${pid}\n`);
    return pid;
  } finally {
    closeSync(out);
  }
}

/**
 * Ends the process: SIGTERM first (its controlled shutdown), SIGKILL once `graceMs` has passed (at once with
 * 0: a crash); returns when it is gone, and removes the pid file.
 */
export async function stopProcess(pid: number, pidFile: string, graceMs: number): Promise<void> {
  if (graceMs > 0) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (isAlive(pid) && Date.now() < deadline) await sleep(200);
  }
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  while (isAlive(pid)) await sleep(100);
  await fs.rm(pidFile, { force: true });
}

/** The pid recorded in `pidFile`, while that process is alive. */
export async function recordedPid(pidFile: string): Promise<number | undefined> {
  const text = await fs.readFile(pidFile, 'utf8').catch(() => undefined);
  const pid = text ? Number.parseInt(text, 10) : Number.NaN;
  return Number.isInteger(pid) && isAlive(pid) ? pid : undefined;
}

/** The last `lines` lines of a log, headed by its path (for errors). */
export async function logTail(logFile: string, lines: number): Promise<string> {
  const text = await fs.readFile(logFile, 'utf8').catch(() => '');
  return `Last lines of ${logFile}:\n${text.split('\n').slice(-lines).join('\n')}`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
