import { MessageHeaders } from '../envelope/message-headers';
import { MessagingTopology } from '../topology/messaging-topology';
import { KeySecret } from '../failure/key-secret';
import { DeadLetterBackend } from './dead-letter-backend.interface';
import { DeadLetterRecord } from './dead-letter-record';
import { archiveOf } from './dead-letter-archive';
import { DeadLetterQuery, matcherOf } from './dead-letter-search';
import {
  InspectedDeadLetter,
  inspected,
  InspectedDeadLetterWithPayload,
  payloadOf,
} from './inspected-dead-letter';
import { checkBatchSize } from './redrive-guards';
import { ReadCutOff } from './read-budget';
import { RedriveLimits } from './redrive-limits';
import { MessagePosition } from './redrive-plan';
import { deriveRoute } from './redrive-route';

/** What `browse()` read: a dead-letter destination's depth and its messages from the head. */
export interface DeadLetterBrowse {
  /** Messages waiting in it. */
  readonly depth: number;
  /**
   * The first `RedriveLimits.MAX_SCAN` of them (`inspectArchive`, `inspectHead`: the first `limit`; `searchHead`:
   * those found among them), in redrive order, as far as the read's byte budget went.
   */
  readonly letters: readonly InspectedDeadLetter[];
  /** Set when the byte budget stopped the read: how many more it did not read (show it: "N more not shown"). */
  readonly cutOff?: ReadCutOff;
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
    /** Bytes one read holds at most (`RedriveLimits.READ_BUDGET_BYTES` when absent). */
    private readonly maxBytes?: number,
  ) {}

  /**
   * Reads up to `limit` (at most 100) messages from the head of `source` with their headers, within the
   * read's byte budget; settles nothing, publishes nothing, records nothing. `inspectHead` also says what
   * the budget left unread.
   */
  async inspect(source: string, limit: number = RedriveLimits.MAX_BATCH): Promise<InspectedDeadLetter[]> {
    return [...(await this.inspectHead(source, limit)).letters];
  }

  /** `inspect` with the depth and what the byte budget left unread: the console's dead-letter view. */
  async inspectHead(source: string, limit: number = RedriveLimits.MAX_BATCH): Promise<DeadLetterBrowse> {
    checkBatchSize(limit);
    deriveRoute(this.backend.kind, source, this.topology); // a dead-letter destination only
    return this.read(source, limit);
  }

  /**
   * Every message of `source` a plan can reach (the first `RedriveLimits.MAX_SCAN` from the head, within
   * the byte budget), with headers, without payloads; settles nothing, records nothing: the console's paged
   * and grouped views.
   */
  async browse(source: string): Promise<DeadLetterBrowse> {
    deriveRoute(this.backend.kind, source, this.topology);
    return this.read(source, RedriveLimits.MAX_SCAN);
  }

  /**
   * The messages of `source` (the first `RedriveLimits.MAX_SCAN`, within the byte budget) with this message
   * id and/or this real key, compared through its pseudonym with the key secret; settles nothing, records
   * nothing. `searchHead` also says what the budget left unsearched.
   */
  async search(source: string, query: DeadLetterQuery): Promise<InspectedDeadLetter[]> {
    return [...(await this.searchHead(source, query)).letters];
  }

  /** `search` with the depth and what the byte budget left unsearched. */
  async searchHead(source: string, query: DeadLetterQuery): Promise<DeadLetterBrowse> {
    deriveRoute(this.backend.kind, source, this.topology);
    return this.read(source, RedriveLimits.MAX_SCAN, matcherOf(query, this.keySecret));
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
    return this.read(archive, limit);
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
    const record = await backend.peekAt(source, position, this.maxBytes);
    if (!record || (record.wire.headers[MessageHeaders.ID] ?? null) !== messageId) return undefined;
    return { ...inspected(record), payload: payloadOf(record.wire.body, maxBytes) };
  }

  /** Up to `limit` from the head within the budget, those `keep` matches, inspected; with what was cut. */
  private async read(
    source: string,
    limit: number,
    keep: (record: DeadLetterRecord) => boolean = () => true,
  ): Promise<DeadLetterBrowse> {
    const { records, depth, cutOff } = await this.backend.peek(source, limit, this.maxBytes);
    return { depth, letters: records.filter(keep).map(inspected), ...(cutOff ? { cutOff } : {}) };
  }
}
