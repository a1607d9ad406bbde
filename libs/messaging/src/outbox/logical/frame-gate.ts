/**
 * The replication stream's frames, in order, held while the relay pauses reading. Pausing the socket stops
 * further reads, but a read already made can carry many frames (pg parses each chunk the socket gave, up to
 * 64 KiB, and emits its messages at once): those wait here raw and reach `deliver` in the server's order once
 * reading resumes, so that what the relay holds decoded passes its limit by the transaction that paused it at
 * most (a CI run under load saw 76 entries against a limit of 50 without this). Raw frames held: one socket
 * read at most, since the socket reads nothing more while paused.
 */
export class FrameGate {
  private readonly held: Buffer[] = [];
  private paused = false;

  constructor(private readonly deliver: (frame: Buffer) => void) {}

  /** Frames waiting for the reading to resume. */
  get waiting(): number {
    return this.held.length;
  }

  /** A frame from the socket: delivered now, or held behind those waiting while paused. */
  push(frame: Buffer): void {
    if (this.paused || this.held.length > 0) this.held.push(frame);
    else this.deliver(frame);
  }

  /** Holds every frame from now on (a delivery may call it: the frames after that one wait). */
  pause(): void {
    this.paused = true;
  }

  /**
   * Delivers the held frames in order until one of them pauses again. True when none is left held: the
   * socket may be read again.
   */
  resume(): boolean {
    this.paused = false;
    while (this.held.length > 0 && !this.paused) this.deliver(this.held.shift() as Buffer);
    return !this.paused;
  }
}
