import { KafkaMessage } from 'kafkajs';
import { OffsetTracker } from './offset-tracker';

/** Commits `offset + 1` of the flow's partition (the next one to read); false when it failed (never rejects). */
export type CommitOffset = (offset: string) => Promise<boolean>;

/**
 * One assigned partition between kafkajs's fetch and the commit, for as long as its consumer keeps it
 * (until a rejoin, a rewind or a restart retires it). Fetched messages wait in one queue per lane (a hash of
 * their key, per tenant) until a handler slot takes them: a lane takes everything queued at once, so a backlog goes to
 * the pipeline in batches while a quiet partition hands out each message as it comes. Settled offsets are
 * committed in order when the subscriber asks (`commit()`, on a timer), one commit at a time, never past an
 * unfinished message. A held message (PAUSE, or a
 * retry-topic record not due) halts the flow: the queued rest is dropped, unsettled, to be fetched again
 * after the rewind.
 */
export class PartitionFlow {
  private readonly tracker = new OffsetTracker();
  private readonly queues = new Map<string, KafkaMessage[]>();
  private queued = 0;
  private running = 0;
  private holdMs?: number;
  private isRetired = false;
  private committed?: string;
  private committing?: Promise<void>;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly commitOffset: CommitOffset,
  ) {}

  /** Records `message` as handed out and queues it in `lane`; false when the flow takes no more. */
  enqueue(lane: string, message: KafkaMessage): boolean {
    if (!this.open) return false;
    this.tracker.dispatch(message.offset);
    const queue = this.queues.get(lane);
    if (queue) queue.push(message);
    else this.queues.set(lane, [message]);
    this.queued += 1;
    return true;
  }

  /** Records `offset` as handed out without queueing it: it stays unsettled (a record held back). */
  withhold(offset: string): void {
    this.tracker.dispatch(offset);
  }

  /** Everything queued in `lane` (nothing once halted or retired), now running. */
  take(lane: string): KafkaMessage[] {
    const messages = this.open ? (this.queues.get(lane) ?? []) : [];
    this.queues.delete(lane);
    this.queued -= messages.length;
    this.running += messages.length;
    return messages;
  }

  /** The messages `take` returned are done: `settled` says which of them may be committed. */
  finish(messages: readonly KafkaMessage[], settled: readonly boolean[]): void {
    messages.forEach((message, i) => {
      if (settled[i]) this.tracker.settle(message.offset);
    });
    this.running -= messages.length;
    this.notify();
  }

  /** Stops handing out messages; the partition resumes after `delayMs` at `resumeAt()`. */
  halt(delayMs: number): void {
    this.holdMs = Math.max(this.holdMs ?? 0, delayMs);
    this.dropQueued();
  }

  /** The flow's consumer no longer reads the partition from here: nothing more is handed out or committed. */
  retire(): void {
    this.isRetired = true;
    this.dropQueued();
  }

  /** Drops what is queued (it stays unsettled); running handlers finish. */
  dropQueued(): void {
    this.queues.clear();
    this.queued = 0;
    this.notify();
  }

  get halted(): boolean {
    return this.holdMs !== undefined;
  }

  /** How long a halted flow waits before the rewind. */
  get holdDelayMs(): number {
    return this.holdMs ?? 0;
  }

  get retired(): boolean {
    return this.isRetired;
  }

  /** Messages queued or running. */
  get outstanding(): number {
    return this.queued + this.running;
  }

  /** Where the partition resumes after a hold: the first offset handed out and not settled. */
  resumeAt(): string | undefined {
    return this.tracker.firstUnsettled();
  }

  /** Resolves once at most `count` messages are queued or running. */
  async whenAtMost(count: number): Promise<void> {
    while (this.outstanding > count) await new Promise<void>((resolve) => this.waiters.add(resolve));
  }

  /** Starts committing what is settled, unless a commit is under way or nothing moved. */
  commit(): void {
    this.commitSettled();
  }

  /** Commits what is settled and waits for the commits under way (not for a retired flow). */
  async flush(): Promise<void> {
    this.commitSettled();
    while (this.committing) await this.committing;
  }

  private get open(): boolean {
    return !this.isRetired && this.holdMs === undefined;
  }

  /** Starts committing the contiguous settled run unless a commit is under way (it goes on afterwards). */
  private commitSettled(): void {
    if (this.isRetired || this.committing) return;
    const target = this.tracker.committable();
    if (target === undefined || target === this.committed) return;
    // A failed commit is tried again with the next `commit()` or flush, not at once (the coordinator is
    // away: its new owner starts after the last commit, and the inbox absorbs the repeats).
    this.committing = this.commitOffset(target).then((committed) => {
      this.committing = undefined;
      if (committed) this.committed = target;
    });
  }

  private notify(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    waiters.forEach((wake) => wake());
  }
}
