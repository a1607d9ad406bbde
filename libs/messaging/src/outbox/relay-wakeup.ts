import { Injectable } from '@nestjs/common';

/** What a wake-up says beyond "rows were written". */
export interface WakeSignal {
  /** The transaction scheduled messages: the relay looks again at when the next is due. */
  readonly scheduled?: boolean;
}

/**
 * The after-commit signal: `OutboxService` fires it when a transaction that wrote outbox rows commits,
 * the relay listens. Kept apart so that neither depends on the other.
 */
@Injectable()
export class RelayWakeup {
  private readonly listeners = new Set<(signal?: WakeSignal) => void>();

  /** Wakes every listener (the local relay). */
  fire(signal?: WakeSignal): void {
    for (const listener of this.listeners) listener(signal);
  }

  /** Returns a function that removes the listener. */
  listen(listener: (signal?: WakeSignal) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
