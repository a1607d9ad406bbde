import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { MESSAGING_CLOCK, MESSAGING_RESOLVED_OPTIONS } from '../messaging.constants';
import { MessagingMetrics } from '../observability/messaging-metrics';
import { HeldMessageFigures } from '../observability/observed-sources';
import { ResolvedMessagingOptions } from '../options/resolve-messaging-options';

/**
 * Why a message is held: its event version, an upcaster that failed on it, (if chosen) its schema, or (tenants
 * on) a tenant this service has not registered.
 */
export type HoldReason = 'version' | 'upcast' | 'schema' | 'tenant';

interface HeldEntry {
  readonly group: string;
  readonly destination: string;
  readonly reason: HoldReason;
  /** When this instance first held it (clock ms). */
  readonly since: number;
  holds: number;
  /** Past this (clock ms) without another look, the entry is stale: the message went elsewhere. */
  staleAt: number;
}

/** An entry not looked at again this long after its longest wait is dropped (the partition moved, the consumer stopped). */
const STALE_GRACE_MS = 60_000;
/** Held messages tracked at most; the one looked at least recently goes first (if it comes back, its window starts again). */
const MAX_TRACKED = 10_000;

/**
 * The messages this instance holds because it cannot read them yet, and since when: the window of each hold
 * counts from the first time this instance held the message. In memory: a restart, or the message moving to
 * another instance, starts its window again, so a message is never dead-lettered before the window, and may be
 * held longer. Read by the health check and the `messaging_consumer_held_messages` gauge.
 */
@Injectable()
export class HeldMessages implements HeldMessageFigures {
  private readonly entries = new Map<string, HeldEntry>();

  constructor(
    @Inject(MESSAGING_CLOCK) private readonly clock: Clock,
    @Inject(MESSAGING_RESOLVED_OPTIONS) private readonly options: ResolvedMessagingOptions,
    private readonly metrics: MessagingMetrics,
  ) {
    metrics.onScrape(async () => this.export());
  }

  /**
   * Counts one more hold of a message: how long this instance has held it (0 the first time) and the number
   * of this hold (1 the first time).
   */
  hold(
    group: string,
    destination: string,
    messageId: string,
    reason: HoldReason,
  ): { heldForMs: number; hold: number } {
    const now = this.clock.now();
    this.prune(now);
    const key = keyOf(group, messageId);
    const staleAt = now + this.options.consumers.versionHold.maxDelayMs + STALE_GRACE_MS;
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key); // to the end: the most recently looked at
      entry.holds += 1;
      entry.staleAt = staleAt;
      this.entries.set(key, entry);
      return { heldForMs: now - entry.since, hold: entry.holds };
    }
    if (this.entries.size >= MAX_TRACKED) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { group, destination, reason, since: now, holds: 1, staleAt });
    return { heldForMs: 0, hold: 1 };
  }

  /** The message is no longer held (handled, dead-lettered, dropped): how long it was, undefined if it was not. */
  release(group: string, messageId: string): number | undefined {
    if (this.entries.size === 0) return undefined;
    const key = keyOf(group, messageId);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    return this.clock.now() - entry.since;
  }

  heldNow(): { count: number; oldestHeldMs: number; windowMs: number } {
    const now = this.clock.now();
    this.prune(now);
    let oldest = now;
    for (const entry of this.entries.values()) oldest = Math.min(oldest, entry.since);
    return {
      count: this.entries.size,
      oldestHeldMs: now - oldest,
      windowMs: this.options.consumers.versionHold.windowMs,
    };
  }

  /** Drops stale entries: the map is in the order of their last look, hence of `staleAt`, so from the front. */
  private prune(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.staleAt >= now) return;
      this.entries.delete(key);
    }
  }

  private export(): void {
    const { oldestHeldMs } = this.heldNow();
    const counts = new Map<string, { labels: Record<string, string>; count: number }>();
    for (const { group, destination, reason } of this.entries.values()) {
      const id = JSON.stringify([group, destination, reason]);
      const counted = counts.get(id) ?? { labels: { group, destination, reason }, count: 0 };
      counted.count += 1;
      counts.set(id, counted);
    }
    this.metrics.held.reset();
    for (const { labels, count } of counts.values()) this.metrics.held.set(labels, count);
    this.metrics.oldestHeldAge.set(oldestHeldMs / 1000);
  }
}

function keyOf(group: string, messageId: string): string {
  return `${group}\n${messageId}`;
}
