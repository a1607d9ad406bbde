/**
 * The demo's live display. On a terminal: a counter and bar redrawn in place per scenario. Elsewhere (CI,
 * a pipe, a file): plain lines, a progress line at most once a second and when a count changes.
 */
export interface Progress {
  /** A line of its own (ends a bar in progress). */
  line(text: string): void;
  /** Draws or updates the bar of `label`: `done` of `total`, with a short note. */
  bar(label: string, done: number, total: number, note?: string): void;
  /** Ends the current bar with a final line. */
  endBar(text: string): void;
}

const WIDTH = 30;

export function createProgress(stream: NodeJS.WriteStream = process.stdout): Progress {
  return stream.isTTY ? new TerminalProgress(stream) : new PlainProgress(stream);
}

/** Terminal colours, empty where there is no terminal. */
export function colours(stream: NodeJS.WriteStream = process.stdout) {
  const on = stream.isTTY && !process.env.NO_COLOR;
  const wrap = (code: string) => (text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
  return { green: wrap('32'), red: wrap('31'), yellow: wrap('33'), bold: wrap('1'), dim: wrap('2') };
}

class TerminalProgress implements Progress {
  private drawing = false;
  private readonly c;

  constructor(private readonly stream: NodeJS.WriteStream) {
    this.c = colours(stream);
  }

  line(text: string): void {
    this.clear();
    this.stream.write(`${text}\n`);
  }

  bar(label: string, done: number, total: number, note = ''): void {
    const filled = total > 0 ? Math.round((WIDTH * Math.min(done, total)) / total) : 0;
    const bar = this.c.green('█'.repeat(filled)) + this.c.dim('░'.repeat(WIDTH - filled));
    this.stream.write(
      `\r\x1b[2K  ${label} ${bar} ${String(done).padStart(String(total).length)}/${total} ${note}`,
    );
    this.drawing = true;
  }

  endBar(text: string): void {
    this.clear();
    this.stream.write(`${text}\n`);
  }

  private clear(): void {
    if (this.drawing) this.stream.write('\r\x1b[2K');
    this.drawing = false;
  }
}

class PlainProgress implements Progress {
  private last?: { key: string; at: number };

  constructor(private readonly stream: NodeJS.WriteStream) {}

  line(text: string): void {
    this.stream.write(`${text}\n`);
  }

  bar(label: string, done: number, total: number, note = ''): void {
    const key = `${label}:${done}/${total}`;
    const now = Date.now();
    if (this.last?.key === key && now - this.last.at < 5_000) return;
    if (this.last && this.last.key !== key && now - this.last.at < 1_000 && done < total) return;
    this.last = { key, at: now };
    this.stream.write(`  ${label} ${done}/${total} ${note}\n`);
  }

  endBar(text: string): void {
    this.last = undefined;
    this.stream.write(`${text}\n`);
  }
}
