import * as amqp from 'amqplib';
import { Clock, systemClock } from '../../common/clock';
import { MessageHeaders } from '../../envelope/message-headers';
import { WireMessage } from '../../envelope/wire-message';
import { destinationNames } from '../../topology/destination-names';
import { amqpHeaders } from '../../transports/rabbitmq/amqp-headers';
import { RabbitMqTransport } from '../../transports/rabbitmq/rabbitmq-transport';
import { AdminCredential } from '../admin-connection';
import { ReplayNotSupportedError } from '../errors/replay-not-supported.error';
import { ReplayWindowError } from '../errors/replay-window.error';
import { asAdmin, NOT_FOUND, replyCode } from '../rabbitmq/rabbit-access';
import { adminRabbitTransport } from '../rabbitmq/rabbit-admin-transport';
import { CopyOf, ReplayBackend, ReplayedPartition } from './replay-backend';
import { ReplayLimits } from './replay-limits';
import { ReplayPacer } from './replay-pacer';
import { ReplayPartitionWindow, ReplayPlan } from './replay-plan';
import { journalWindowByTime, PartitionWatermarks } from './replay-window';

/** The header a stream gives each message it delivers: its offset. */
const STREAM_OFFSET = 'x-stream-offset';

/** Where a read of a journal starts: an offset, its first or last chunk, or a time (the broker's index). */
type JournalStart = number | 'first' | 'last' | Date;

/**
 * Replay on RabbitMQ, as the admin user: reads the destination's journal, the stream queue
 * `destinationNames.journal(destination)` bound to its exchange (`JournalTopology`), whose offsets are the
 * window's (partition 0), and publishes the copies to the group's work queue through the default exchange,
 * with `mandatory` and a publisher confirm each, in offset order, none faster than the pacer lets through.
 * It stops at the first unconfirmed copy. A message's time is its AMQP `timestamp` (whole seconds, set by the
 * library's publisher), else its `msg.occurred-at`.
 */
export class RabbitReplay implements ReplayBackend {
  private readonly transport: RabbitMqTransport;
  /** The time of each journal's first message, as `watermarks` found it. */
  private readonly firstTimes = new Map<string, number | undefined>();

  constructor(
    url: string,
    private readonly credential: AdminCredential,
    /** The clock its reads wait on (not the pacer's). */
    private readonly clock: Pick<Clock, 'now' | 'setTimeout'> = systemClock,
  ) {
    this.transport = adminRabbitTransport(url, credential, 'replay');
  }

  /**
   * The journal's offsets: its first message's, and one past the last one's (read from its last chunk until
   * nothing more comes for `ReplayLimits.JOURNAL_IDLE_MS`). `ReplayNotSupportedError` when it does not exist.
   */
  watermarks(destination: string): Promise<PartitionWatermarks[]> {
    const journal = destinationNames.journal(destination);
    return asAdmin(this.credential.principal, `read ${journal}`, async () => {
      await this.requireJournal(destination, journal);
      let first: { offset: number; time: number | undefined } | undefined;
      await this.read(journal, 'first', ReplayLimits.JOURNAL_IDLE_MS, (message, offset) => {
        first = { offset, time: messageTime(message) };
        return false;
      });
      if (!first) return [{ partition: 0, low: '0', high: '0' }];
      this.firstTimes.set(journal, first.time);
      let last = first.offset;
      // Under a steady stream of publishes the end moves on: what came within a few idle spans will do.
      const until = this.clock.now() + 5 * ReplayLimits.JOURNAL_IDLE_MS;
      await this.read(journal, 'last', ReplayLimits.JOURNAL_IDLE_MS, (_, offset) => {
        last = Math.max(last, offset);
        return this.clock.now() < until;
      });
      return [{ partition: 0, low: String(first.offset), high: String(last + 1) }];
    });
  }

  /**
   * The offsets from the first message at or after `from` to the first at or after `to` (or the end), read
   * from the broker's time index `ReplayLimits.JOURNAL_TIME_SLACK_MS` before `from` (`journalWindowByTime`).
   */
  windowByTime(
    destination: string,
    from: Date,
    to: Date,
    watermarks: readonly PartitionWatermarks[],
  ): Promise<ReplayPartitionWindow[]> {
    const journal = destinationNames.journal(destination);
    return asAdmin(this.credential.principal, `read ${journal}`, async () => {
      const [mark] = watermarks;
      const firstTime = this.firstTimes.get(journal);
      const scanned: Array<{ offset: number; time: number | undefined }> = [];
      const high = Number(mark.high);
      let inWindow = 0;
      if (high > Number(mark.low)) {
        const start = new Date(from.getTime() - ReplayLimits.JOURNAL_TIME_SLACK_MS);
        await this.read(journal, start, ReplayLimits.JOURNAL_IDLE_MS, (message, offset) => {
          if (offset >= high) return false;
          const time = messageTime(message);
          scanned.push({ offset, time });
          if (time !== undefined && time >= to.getTime()) return false;
          // More than a replay may take: enough to have it refused (`checkWindows`).
          if (time !== undefined && time >= from.getTime() && ++inWindow > ReplayLimits.MAX_RECORDS)
            return false;
          return offset < high - 1;
        });
      }
      return journalWindowByTime(journal, { from, to }, { ...mark, firstTime }, scanned);
    });
  }

  /** The group's work queue, through the default exchange: only that group gets the copies. */
  targetOf(destination: string, group: string): string {
    return destinationNames.workQueue(destination, group);
  }

  planFields(destination: string): Pick<ReplayPlan, 'journal'> {
    return { journal: destinationNames.journal(destination) };
  }

  /** Publishes the copies of the plan's window (see the class). */
  replay(plan: ReplayPlan, copyOf: CopyOf, pacer: ReplayPacer): Promise<ReplayedPartition[]> {
    const journal = plan.journal ?? destinationNames.journal(plan.source);
    return asAdmin(this.credential.principal, `replay ${journal}`, async () => {
      const done: ReplayedPartition[] = [];
      for (const window of plan.partitions) {
        await this.requireJournal(plan.source, journal);
        done.push(await this.replayWindow(journal, plan.source, window, copyOf, pacer));
      }
      return done;
    });
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  private async replayWindow(
    journal: string,
    destination: string,
    window: ReplayPartitionWindow,
    copyOf: CopyOf,
    pacer: ReplayPacer,
  ): Promise<ReplayedPartition> {
    const from = Number(window.from);
    const to = Number(window.to);
    let [published, skipped, next] = [0, 0, from];
    let error: string | undefined;
    let first = true;
    await this.read(journal, from, ReplayLimits.JOURNAL_READ_TIMEOUT_MS, async (message, offset) => {
      if (first && offset > from) {
        throw new ReplayWindowError(
          `${journal} keeps offsets from ${offset} only now: retention deleted the start of the window ` +
            `(${from}) after it was planned`,
        );
      }
      first = false;
      if (offset < from) return true;
      if (offset >= to) return false;
      const made = copyOf(journalRecord(destination, message));
      if ('skipped' in made) skipped++;
      else {
        await pacer.admit();
        error = await this.publish(made.copy);
        if (error) return false;
        published++;
      }
      next = offset + 1;
      return next < to;
    });
    if (!error && next < to) {
      error = `${journal} gave nothing after offset ${next - 1} for ${ReplayLimits.JOURNAL_READ_TIMEOUT_MS} ms`;
    }
    return {
      partition: window.partition,
      published,
      skipped,
      next: String(next),
      ...(error ? { error } : {}),
    };
  }

  /** One copy, confirmed; resolves with why it was not, or undefined. */
  private async publish(copy: WireMessage): Promise<string | undefined> {
    const [outcome] = await this.transport.publishCopies([copy]);
    return outcome.status === 'CONFIRMED' ? undefined : `${outcome.status}: ${outcome.error.message}`;
  }

  /** `ReplayNotSupportedError` naming the journal and how to create it, when it does not exist. */
  private async requireJournal(destination: string, journal: string): Promise<void> {
    const channel = await (await this.transport.connection.get()).createChannel();
    channel.on('error', () => undefined);
    try {
      await channel.checkQueue(journal);
    } catch (error) {
      if (replyCode(error) === NOT_FOUND) throw new ReplayNotSupportedError('rabbitmq', destination, journal);
      throw error;
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /**
   * Reads the journal from `start` on a channel of its own (a stream needs a prefetch and acks): `visit` gets
   * each message with its offset, in offset order, until it resolves false or nothing comes for `idleMs`.
   * At most `ReplayLimits.PAGE_RECORDS` unacked messages are held.
   */
  private async read(
    journal: string,
    start: JournalStart,
    idleMs: number,
    visit: (message: amqp.ConsumeMessage, offset: number) => boolean | Promise<boolean>,
  ): Promise<void> {
    const channel = await (await this.transport.connection.get()).createChannel();
    let failure: Error | undefined;
    channel.on('error', (error: Error) => void (failure = error));
    const buffered: amqp.ConsumeMessage[] = [];
    let cancelled = false;
    let wake: (() => void) | undefined;
    try {
      await channel.prefetch(ReplayLimits.PAGE_RECORDS);
      await channel.consume(
        journal,
        (message) => {
          if (message) buffered.push(message);
          else cancelled = true;
          wake?.();
        },
        { noAck: false, arguments: { [STREAM_OFFSET]: startArgument(start) } },
      );
      for (;;) {
        if (buffered.length === 0) {
          if (cancelled || failure) throw failure ?? new Error(`the broker cancelled the read of ${journal}`);
          await new Promise<void>((resolve) => {
            const cancel = this.clock.setTimeout(resolve, idleMs);
            wake = () => {
              cancel();
              resolve();
            };
          });
          wake = undefined;
          if (buffered.length === 0) {
            if (cancelled || failure) continue;
            return;
          }
        }
        const message = buffered.shift() as amqp.ConsumeMessage;
        const goOn = await visit(message, offsetOf(message));
        channel.ack(message);
        if (!goOn) return;
      }
    } finally {
      await channel.close().catch(() => undefined);
    }
  }
}

/** The `x-stream-offset` consumer argument: amqplib encodes a plain number as an int, a time as seconds. */
function startArgument(start: JournalStart): unknown {
  if (typeof start === 'number') return { '!': 'long', value: start };
  if (start instanceof Date) return { '!': 'timestamp', value: Math.floor(start.getTime() / 1000) };
  return start;
}

function offsetOf(message: amqp.ConsumeMessage): number {
  const offset: unknown = message.properties.headers?.[STREAM_OFFSET];
  if (typeof offset !== 'number') throw new Error(`a message of the journal has no ${STREAM_OFFSET}`);
  return offset;
}

/**
 * A message's time, ms: its AMQP `timestamp` (whole seconds; the library's publisher sets it when it
 * publishes), else its `msg.occurred-at`, else undefined.
 */
export function messageTime(message: Pick<amqp.Message, 'properties'>): number | undefined {
  const timestamp: unknown = message.properties.timestamp;
  if (typeof timestamp === 'number') return timestamp * 1000;
  const occurred = Date.parse(String(message.properties.headers?.[MessageHeaders.OCCURRED_AT] ?? ''));
  return Number.isNaN(occurred) ? undefined : occurred;
}

/** A message of the journal as the record `replayCopy` copies: its headers, without the stream's offset. */
function journalRecord(destination: string, message: amqp.ConsumeMessage): WireMessage {
  const headers = amqpHeaders(message);
  delete headers[STREAM_OFFSET];
  return { destination, key: headers[MessageHeaders.KEY] ?? null, headers, body: message.content };
}
