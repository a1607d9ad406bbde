import { WireMessage } from '../envelope/wire-message';
import { DeadLetterRecord } from './dead-letter-record';
import { ReadCutOff } from './read-budget';
import { MessagePosition, RedrivePlan } from './redrive-plan';
import { DeadLetterQueueInfo, MessageRedriveOutcome } from './redrive-result';

/** The copy (or copies, published in order) a move publishes for a record read. */
export type CopiesOf = (record: DeadLetterRecord) => WireMessage | readonly WireMessage[];

/** The copies of `record` as a list. */
export function copiesOf(copyOf: CopiesOf, record: DeadLetterRecord): readonly WireMessage[] {
  const copies: WireMessage | readonly WireMessage[] = copyOf(record);
  return isList(copies) ? copies : [copies];
}

function isList(copies: WireMessage | readonly WireMessage[]): copies is readonly WireMessage[] {
  return Array.isArray(copies);
}

/** What a dry run read: the first messages of a dead-letter destination and its depth. */
export interface DeadLetterPeek {
  readonly records: readonly DeadLetterRecord[];
  readonly depth: number;
  /** Set when the read's byte budget stopped it before `limit` while more were waiting. */
  readonly cutOff?: ReadCutOff;
}

/**
 * The broker side of a redrive, one implementation per broker (`RabbitDeadLetters`, `KafkaDeadLetters`).
 * Reading never settles anything; `move` publishes, waits for confirms and settles only what was confirmed.
 */
export interface DeadLetterBackend {
  readonly kind: 'kafka' | 'rabbitmq';
  /** Dead-letter destinations and depths; `names` empty: every one the broker can list. */
  list(names: readonly string[]): Promise<DeadLetterQueueInfo[]>;
  /**
   * Up to `limit` messages from the head of `source`, in the order a redrive would move them, holding at
   * most `maxBytes` of them (bodies, keys and headers; default `RedriveLimits.READ_BUDGET_BYTES`): what the
   * budget left unread is `cutOff`, never read past.
   */
  peek(source: string, limit: number, maxBytes?: number): Promise<DeadLetterPeek>;
  /**
   * The message at `position` of `source` (RabbitMQ: reads up to it from the head; Kafka: that one offset,
   * if it is not redriven yet), settling nothing; undefined when there is none there, or (RabbitMQ) when
   * the messages before it take more than `maxBytes` (default `RedriveLimits.READ_BUDGET_BYTES`).
   */
  peekAt(source: string, position: MessagePosition, maxBytes?: number): Promise<DeadLetterRecord | undefined>;
  /**
   * Visits every message of `source` from the head, in the order a redrive moves them (Kafka: partition by
   * partition, by offset), holding one page at a time, settling nothing; stops when `visit` resolves false.
   * Resolves with the depth when the scan began. What plans at scale read (`planBulk`).
   */
  scan(
    source: string,
    visit: (record: DeadLetterRecord) => Promise<boolean> | boolean,
  ): Promise<{ readonly depth: number }>;
  /** Throws `RedriveTargetNotFoundError` when `target` does not exist. */
  checkTarget(source: string, target: string): Promise<void>;
  /** Creates `archive`, where a discard of `source` puts its messages, unless it exists. */
  ensureArchive(source: string, archive: string): Promise<void>;
  /**
   * Reads the planned messages again (refusing with `RedrivePlanStaleError` if they changed), runs
   * `checkRead` on them (which throws to move nothing), publishes `copyOf(record)` for each (one copy, or
   * several in order: an edit's archived original, then its edited copy) and settles in the source exactly
   * those whose every copy was confirmed. Messages not planned stay in the source in their
   * order (RabbitMQ: returned to their place; Kafka: the plan's `kept` are re-parked at the end first).
   */
  move(
    plan: RedrivePlan,
    copyOf: CopiesOf,
    checkRead: (records: readonly DeadLetterRecord[]) => void,
  ): Promise<MessageRedriveOutcome[]>;
  close(): Promise<void>;
}
