import { MessageHeaders } from '../envelope/message-headers';
import { MessagingTopology } from '../topology/messaging-topology';
import { KeySecret } from '../failure/key-secret';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import { archiveOf } from './dead-letter-archive';
import { DeadLetterQuery, matcherOf } from './dead-letter-search';
import {
  InspectedDeadLetter,
  inspected,
  InspectedDeadLetterWithPayload,
  payloadOf,
} from './inspected-dead-letter';
import { checkBatchSize } from './redrive-guards';
import { RedriveLimits } from './redrive-limits';
import { MessagePosition } from './redrive-plan';
import { deriveRoute } from './redrive-route';

/** What `browse()` read: a dead-letter destination's depth and its messages from the head. */
export interface DeadLetterBrowse {
  /** Messages waiting in it. */
  readonly depth: number;
  /** The first `RedriveLimits.MAX_SCAN` of them (`inspectArchive`: the first `limit`), in redrive order. */
  readonly letters: readonly InspectedDeadLetter[];
}

/**
 * The read-only side of `RedriveService` (the console's views): reads settle nothing, publish nothing and
 * record nothing, and read only dead-letter destinations (the route is derived first).
 */
export class DeadLetterReader {
  constructor(
    private readonly backend: DeadLetterBackend,
    private readonly topology: MessagingTopology | undefined,
    private readonly keySecret: KeySecret | undefined,
  ) {}

  /**
   * Reads up to `limit` (at most 100) messages from the head of `source` with their headers and payload,
   * settles nothing, publishes nothing, records nothing: the console's dead-letter view.
   */
  async inspect(source: string, limit: number = RedriveLimits.MAX_BATCH): Promise<InspectedDeadLetter[]> {
    checkBatchSize(limit);
    const backend = this.backend;
    deriveRoute(backend.kind, source, this.topology); // a dead-letter destination only
    const { records } = await backend.peek(source, limit);
    return records.map(inspected);
  }

  /**
   * Every message of `source` a plan can reach (the first `RedriveLimits.MAX_SCAN` from the head), with
   * headers, without payloads; settles nothing, records nothing: the console's paged and grouped views.
   */
  async browse(source: string): Promise<DeadLetterBrowse> {
    const backend = this.backend;
    deriveRoute(backend.kind, source, this.topology);
    const { records, depth } = await backend.peek(source, RedriveLimits.MAX_SCAN);
    return { depth, letters: records.map(inspected) };
  }

  /**
   * The messages of `source` (the first `RedriveLimits.MAX_SCAN`) with this message id and/or this real key,
   * compared through its pseudonym with the key secret; settles nothing, records nothing.
   */
  async search(source: string, query: DeadLetterQuery): Promise<InspectedDeadLetter[]> {
    const backend = this.backend;
    deriveRoute(backend.kind, source, this.topology);
    const { records } = await backend.peek(source, RedriveLimits.MAX_SCAN);
    return records.filter(matcherOf(query, this.keySecret)).map(inspected);
  }

  /**
   * The first `limit` (at most 100) messages discarded from `source` (its archive, `<source>.archive`), with
   * headers, without payloads; empty when nothing was discarded yet.
   */
  async inspectArchive(source: string, limit: number = RedriveLimits.MAX_BATCH): Promise<DeadLetterBrowse> {
    checkBatchSize(limit);
    const backend = this.backend;
    deriveRoute(backend.kind, source, this.topology);
    const archive = archiveOf(source);
    const [info] = await backend.list([archive]);
    if (!info?.exists) return { depth: 0, letters: [] };
    const { records, depth } = await backend.peek(archive, limit);
    return { depth, letters: records.map(inspected) };
  }

  /**
   * The message at `position` of `source` if it is still the one with `messageId`, with the first
   * `maxBytes` of its body (default 64 KiB): one message read (RabbitMQ: up to it from the head), nothing
   * settled, nothing recorded. Undefined when another message (or none) is there now.
   */
  async inspectMessage(
    source: string,
    position: MessagePosition,
    messageId: string | null,
    maxBytes = 64 * 1024,
  ): Promise<InspectedDeadLetterWithPayload | undefined> {
    const backend = this.backend;
    deriveRoute(backend.kind, source, this.topology);
    const record = await backend.peekAt(source, position);
    if (!record || (record.wire.headers[MessageHeaders.ID] ?? null) !== messageId) return undefined;
    return { ...inspected(record), payload: payloadOf(record.wire.body, maxBytes) };
  }
}
