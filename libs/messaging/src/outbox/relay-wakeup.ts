import { Injectable } from '@nestjs/common';

/**
 * The after-commit signal: `OutboxService` fires it when a transaction that wrote outbox rows commits,
 * the relay listens. Kept apart so that neither depends on the other.
 */
@Injectable()
export class RelayWakeup {
  private readonly listeners = new Set<() => void>();

  /** Wakes every listener (the local relay). */
  fire(): void {
    for (const listener of this.listeners) listener();
  }

  /** Returns a function that removes the listener. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
