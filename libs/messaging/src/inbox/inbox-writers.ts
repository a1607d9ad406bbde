/**
 * The handlers of this process that write to the inbox, as inbox retention reads them: retention runs only
 * where some handler writes records. The consumers stand above the inbox (their handlers run through it), so
 * the inbox names only what it reads and the core module hands it the handler registry (`useExisting`).
 */
export abstract class InboxWriters {
  /** How many handlers are registered (0: this process consumes nothing). */
  abstract readonly size: number;
}
