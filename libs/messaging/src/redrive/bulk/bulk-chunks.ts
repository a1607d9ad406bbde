import { PlannedMessage } from '../redrive-plan';
import { BulkItem } from './bulk-selection';

/** Where an item of a plan at scale stands: not moved yet, being moved, or moved (re-parked, for a kept one). */
export type BulkItemStatus = 'PENDING' | 'IN_FLIGHT' | 'DONE';

/** An item as the plan store holds it, with its status. */
export interface StoredBulkItem extends BulkItem {
  /** Not moved yet, being moved, or moved. */
  readonly status: BulkItemStatus;
}

/** One step of an execution at scale: a plan's worth of messages, positioned as they are now. */
export interface BulkChunk {
  /** The stored items the chunk moves (taken and kept), in order. */
  readonly items: readonly StoredBulkItem[];
  /** The taken ones, in order, each with its position as it is now (RabbitMQ: the index shifts). */
  readonly messages: readonly PlannedMessage[];
  /** Kafka: the kept ones (re-parked), positions as planned. */
  readonly kept: readonly PlannedMessage[];
}

/** How big a chunk is: at most `take` moved messages and `items` items in all. */
export interface ChunkLimits {
  readonly take: number;
  readonly items: number;
}

/** At most 100 messages moved (`RedriveLimits.MAX_BATCH`) and 1,000 items (with kept ones) per chunk. */
export const DEFAULT_CHUNK_LIMITS: ChunkLimits = { take: 100, items: 1_000 };

/** Reads the items after `afterSeq` (-1: from the start), at most `limit`, in order. */
export type BulkPageReader = (afterSeq: number, limit: number) => Promise<readonly StoredBulkItem[]>;

/** Items read from the store at a time. */
export const BULK_PAGE = 500;

/**
 * The chunks of a plan at scale's pending items, reading the store a page at a time: what the execution
 * holds is one page and one chunk, whatever the plan's size. Items already `DONE` are passed over.
 *
 * RabbitMQ positions are queue indexes from the head, and every message moved before shifts the ones behind
 * it: an item's index now is its planned index less the taken items before it that are gone. The caller says
 * how many of a chunk's taken messages are gone after it ran (`next(gone)`); a message that changed anyway
 * is refused by the move's fingerprint and description checks, never moved in its place. Kafka offsets do
 * not move.
 */
export async function* bulkChunks(
  transport: 'kafka' | 'rabbitmq',
  readPage: BulkPageReader,
  limits: ChunkLimits = DEFAULT_CHUNK_LIMITS,
): AsyncGenerator<BulkChunk, void, number | undefined> {
  let gone = 0; // RabbitMQ: taken items before the read position that left the queue
  let afterSeq = -1;
  let items: StoredBulkItem[] = [];
  let messages: PlannedMessage[] = [];
  let kept: PlannedMessage[] = [];
  const full = () => messages.length >= limits.take || items.length >= limits.items;
  for (;;) {
    const page = await readPage(afterSeq, BULK_PAGE);
    for (const item of page) {
      afterSeq = item.seq;
      if (item.status === 'DONE') {
        if (item.role === 'take') gone++;
        continue;
      }
      items.push(item);
      if (item.role === 'keep') kept.push(item.message);
      else messages.push(shifted(item.message, transport, gone));
      if (full()) {
        const movedNow: number | undefined = yield { items, messages, kept };
        gone += movedNow ?? 0;
        items = [];
        messages = [];
        kept = [];
      }
    }
    if (page.length < BULK_PAGE) break;
  }
  if (items.length > 0) yield { items, messages, kept };
}

/** The message with its RabbitMQ index less the `gone` taken messages before it. */
export function shifted(
  message: PlannedMessage,
  transport: 'kafka' | 'rabbitmq',
  gone: number,
): PlannedMessage {
  if (transport !== 'rabbitmq' || message.position.kind !== 'queue' || gone === 0) return message;
  const index = message.position.index - gone;
  if (index < 0)
    throw new RangeError(`item at index ${message.position.index} cannot have ${gone} gone before it`);
  return { ...message, position: { kind: 'queue', index } };
}
