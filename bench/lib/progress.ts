/**
 * Where a long run is. On a terminal: one line redrawn in place, with the overall step, a bar for the
 * current step and the elapsed time. Elsewhere (CI, a pipe): plain lines, at most one every 2 s per step.
 */
export interface Progress {
  /** Starts step `label` (counts towards the overall total). */
  step(label: string): void;
  /** Progress within the current step. */
  update(done: number, total: number, note?: string): void;
  /** A line of its own, above the bar. */
  log(text: string): void;
  /** Clears the bar. */
  done(): void;
}

const WIDTH = 24;

export function createProgress(totalSteps: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  return stream.isTTY ? new TerminalProgress(totalSteps, stream) : new PlainProgress(totalSteps, stream);
}

abstract class BaseProgress implements Progress {
  protected index = 0;
  protected label = '';
  protected readonly started = Date.now();

  constructor(protected readonly total: number) {}

  step(label: string): void {
    this.index += 1;
    this.label = label;
    this.update(0, 0);
  }

  protected header(): string {
    const elapsed = Math.round((Date.now() - this.started) / 1000);
    return `[${String(Math.min(this.index, this.total)).padStart(String(this.total).length)}/${this.total} ${formatDuration(elapsed)}] ${this.label}`;
  }

  abstract update(done: number, total: number, note?: string): void;
  abstract log(text: string): void;
  abstract done(): void;
}

class TerminalProgress extends BaseProgress {
  constructor(
    total: number,
    private readonly stream: NodeJS.WriteStream,
  ) {
    super(total);
  }

  update(done: number, total: number, note = ''): void {
    const filled = total > 0 ? Math.round((WIDTH * Math.min(done, total)) / total) : 0;
    const bar = total > 0 ? ` ${'█'.repeat(filled)}${'░'.repeat(WIDTH - filled)} ${done}/${total}` : '';
    const line = `${this.header()}${bar} ${note}`;
    const columns = this.stream.columns ?? 120;
    this.stream.write(`\r\x1b[2K${line.slice(0, columns - 1)}`);
  }

  log(text: string): void {
    this.stream.write(`\r\x1b[2K${text}\n`);
    this.update(0, 0);
  }

  done(): void {
    this.stream.write('\r\x1b[2K');
  }
}

class PlainProgress extends BaseProgress {
  private lastAt = 0;

  constructor(
    total: number,
    private readonly stream: NodeJS.WriteStream,
  ) {
    super(total);
  }

  override step(label: string): void {
    this.index += 1;
    this.label = label;
    this.lastAt = Date.now();
    this.stream.write(`${this.header()}\n`);
  }

  update(done: number, total: number, note = ''): void {
    const now = Date.now();
    if (total === 0 || (now - this.lastAt < 2_000 && done < total)) return;
    this.lastAt = now;
    this.stream.write(`${this.header()} ${done}/${total} ${note}\n`);
  }

  log(text: string): void {
    this.stream.write(`${text}\n`);
  }

  done(): void {}
}

function formatDuration(seconds: number): string {
  const m = Math.floor(seconds / 60);
  return `${m}:${String(seconds % 60).padStart(2, '0')}`;
}
