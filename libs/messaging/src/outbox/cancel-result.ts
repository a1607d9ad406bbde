/**
 * Why `OutboxService.cancel()` cancelled nothing:
 * - `'pending'`: the id is in the outbox, not yet confirmed by the broker: it came due and was moved there (or
 *   was never scheduled); it will be published.
 * - `'sent'`: the id is in the outbox and the broker confirmed it (a row kept for `retention.sentRetentionMs`).
 * - `'not-found'`: neither table holds the id: unknown, cancelled already, or published and its row deleted
 *   (retention, or `sentRetentionMs: 0`).
 */
export type CancelRefusal = 'pending' | 'sent' | 'not-found';

/**
 * What `OutboxService.cancel()` did: `cancelled: true` when the scheduled message waited and will never be
 * published once the transaction commits; otherwise `cancelled: false` and the `reason`.
 */
export type CancelResult =
  { readonly cancelled: true } | { readonly cancelled: false; readonly reason: CancelRefusal };
