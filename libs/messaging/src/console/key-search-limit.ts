/** Searches by key one session may make in any `KEY_SEARCH_WINDOW_MS`. */
export const KEY_SEARCHES_PER_WINDOW = 20;
/** The window searches by key are counted in, ms: 10 minutes. */
export const KEY_SEARCH_WINDOW_MS = 10 * 60_000;

/** Whether a session may search by key now; `first`: the first refusal of this stretch (worth an audit entry). */
export type KeySearchVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterMs: number; readonly first: boolean };

/**
 * At most `KEY_SEARCHES_PER_WINDOW` searches by key per session in any `KEY_SEARCH_WINDOW_MS`: a search by
 * key answers whether a guessed key is in the queue, so it must not become an unlimited oracle that reverses
 * pseudonyms (issue 45, finding 14). Pure logic on an injected clock; a session's times are forgotten once
 * they are all out of the window.
 */
export class KeySearchLimit {
  private readonly searches = new Map<string, { times: number[]; refused: boolean }>();

  constructor(private readonly now: () => number) {}

  /** Counts a search by key of `sessionId` when it is allowed. */
  take(sessionId: string): KeySearchVerdict {
    const now = this.now();
    this.forgetOld(now);
    const entry = this.searches.get(sessionId) ?? { times: [], refused: false };
    if (entry.times.length >= KEY_SEARCHES_PER_WINDOW) {
      const first = !entry.refused;
      entry.refused = true;
      return { allowed: false, retryAfterMs: entry.times[0] + KEY_SEARCH_WINDOW_MS - now, first };
    }
    entry.times.push(now);
    entry.refused = false;
    this.searches.set(sessionId, entry);
    return { allowed: true };
  }

  private forgetOld(now: number): void {
    for (const [id, entry] of this.searches) {
      while (entry.times.length > 0 && entry.times[0] <= now - KEY_SEARCH_WINDOW_MS) entry.times.shift();
      if (entry.times.length === 0) this.searches.delete(id);
    }
  }
}
