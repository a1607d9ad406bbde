import { PublishOutcome } from '../../transports/publish-outcome';
import { NewOutboxRow } from '../outbox-row';

/** What the rules need of a message: its destination and its key, one ordering lane together. */
export type Laned = Pick<NewOutboxRow, 'destination' | 'key'>;

/** An item the broker did not confirm, with what it said. */
export interface Unconfirmed<T> {
  readonly item: T;
  readonly outcome: Exclude<PublishOutcome, { status: 'CONFIRMED' }>;
}

/** An item behind an unconfirmed item of its key in the same batch, with what the broker said about it. */
export interface HeldBack<T> {
  readonly item: T;
  readonly outcome: PublishOutcome;
}

/** A published batch, sorted by what the broker said (`sortOutcomes`). */
export interface SortedOutcomes<T> {
  readonly items: readonly T[];
  /** Confirmed, and no earlier item of their key in the batch unconfirmed: done with. */
  readonly confirmed: readonly T[];
  /** The first unconfirmed item of each key: an attempt is counted, and it is tried again after a backoff. */
  readonly unconfirmed: readonly Unconfirmed<T>[];
  /**
   * The items of a key after its first unconfirmed one, whatever the broker said about them: they go again
   * after it, without counting an attempt. A confirmed one among them is on the broker ahead of the earlier
   * item (RabbitMQ answers each message of a batch on its own); its copy that counts is the one that follows
   * the earlier item's.
   */
  readonly heldBack: readonly HeldBack<T>[];
}

/** The ordering lane of a message: one destination's key. */
export function keyOf(message: Laned): string {
  return `${message.destination}\u0000${message.key}`;
}

/**
 * Pairs each item with its outcome (the transport answers one outcome per message, in order: per message on
 * RabbitMQ, per send on Kafka). Once a key has an unconfirmed item, its later items in the batch are held back
 * with it: counting one done would let it count as delivered before the item ahead of it. Both relays settle
 * their batches through this: the polling relay's rows, the logical relay's queued messages.
 */
export function sortOutcomes<T>(
  items: readonly T[],
  outcomes: readonly PublishOutcome[],
  laneOf: (item: T) => string,
): SortedOutcomes<T> {
  const confirmed: T[] = [];
  const unconfirmed: Unconfirmed<T>[] = [];
  const heldBack: HeldBack<T>[] = [];
  const failedKeys = new Set<string>();
  items.forEach((item, i) => {
    // A transport that answered fewer outcomes than messages said nothing about the rest: AMBIGUOUS.
    const outcome: PublishOutcome = outcomes[i] ?? { status: 'AMBIGUOUS', error: new Error('no outcome') };
    const key = laneOf(item);
    if (failedKeys.has(key)) heldBack.push({ item, outcome });
    else if (outcome.status === 'CONFIRMED') confirmed.push(item);
    else {
      unconfirmed.push({ item, outcome });
      failedKeys.add(key);
    }
  });
  return { items, confirmed, unconfirmed, heldBack };
}

/** True when the broker confirmed no message of a batch that had some (it looks down). */
export function confirmedNothing<T>(batch: SortedOutcomes<T>): boolean {
  return (
    batch.items.length > 0 &&
    batch.confirmed.length === 0 &&
    batch.heldBack.every(({ outcome }) => outcome.status !== 'CONFIRMED')
  );
}

/** Batches published one after the other, as one. */
export function joinBatches<T>(batches: readonly SortedOutcomes<T>[]): SortedOutcomes<T> {
  if (batches.length === 1) return batches[0];
  return {
    items: batches.flatMap((b) => b.items),
    confirmed: batches.flatMap((b) => b.confirmed),
    unconfirmed: batches.flatMap((b) => b.unconfirmed),
    heldBack: batches.flatMap((b) => b.heldBack),
  };
}

/**
 * Splits messages read while an earlier batch was on the wire: those whose key had a message that was not
 * confirmed must wait behind it (`release`), the others go on (`publish`), each in order.
 */
export function holdBackBehindFailures<T extends Laned>(
  messages: readonly T[],
  failedKeys: ReadonlySet<string>,
): { readonly publish: T[]; readonly release: T[] } {
  const publish: T[] = [];
  const release: T[] = [];
  for (const message of messages) (failedKeys.has(keyOf(message)) ? release : publish).push(message);
  return { publish, release };
}
