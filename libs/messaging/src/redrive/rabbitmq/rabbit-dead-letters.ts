import * as amqp from 'amqplib';
import { RabbitMqTransport } from '../../transports/rabbitmq/rabbitmq-transport';
import { AdminCredential } from '../admin-connection';
import { copiesOf, CopiesOf, DeadLetterBackend, DeadLetterPeek } from '../dead-letter-backend.interface';
import { DeadLetterRecord, fingerprintOf } from '../dead-letter-record';
import { DeadLetterQueueNotFoundError } from '../errors/dead-letter-queue-not-found.error';
import { RedrivePlanStaleError } from '../errors/redrive-plan-stale.error';
import { RedriveTargetNotFoundError } from '../errors/redrive-target-not-found.error';
import { cutOffOf, headerValueBytes, ReadBudget } from '../read-budget';
import { RedriveLimits } from '../redrive-limits';
import { MessagePosition, RedrivePlan } from '../redrive-plan';
import { DeadLetterQueueInfo, MessageRedriveOutcome } from '../redrive-result';
import { asAdmin, NOT_FOUND, replyCode } from './rabbit-access';
import { adminRabbitTransport } from './rabbit-admin-transport';
import { rabbitRecord } from './rabbit-records';

/**
 * Redrive on RabbitMQ, as the admin user. Reading is `basic.get` without ack on a channel that is then
 * closed, so the broker puts every message back where it was. The target is the group's work queue
 * `<destination>.<group>` (only the group that failed gets the messages again), reached through the default
 * exchange with `mandatory` and publisher confirms.
 *
 * A quorum queue counts each such read as a delivery (`x-delivery-count`, left out of the fingerprints).
 * Closing the channel, not `basic.nack` with requeue, returns them: on RabbitMQ 3.x a nacked message goes
 * to the back of a quorum queue, which would reorder the DLQ under its plans. On 4.x a quorum queue drops a
 * message after 20 deliveries by default: give dead-letter queues an unlimited delivery limit there (the
 * guide's RabbitMQ recipe).
 */
export class RabbitDeadLetters implements DeadLetterBackend {
  readonly kind = 'rabbitmq' as const;
  private readonly transport: RabbitMqTransport;

  constructor(
    url: string,
    private readonly credential: AdminCredential,
  ) {
    this.transport = adminRabbitTransport(url, credential, 'redrive');
  }

  /** RabbitMQ cannot list queues over AMQP: `names` says which dead-letter queues to look at. */
  async list(names: readonly string[]): Promise<DeadLetterQueueInfo[]> {
    const found: DeadLetterQueueInfo[] = [];
    for (const name of names) {
      const info = await this.check(name);
      found.push(
        info
          ? { name, exists: true, depth: info.messageCount, consumers: info.consumerCount }
          : {
              name,
              exists: false,
              depth: 0,
            },
      );
    }
    return found;
  }

  async peek(
    source: string,
    limit: number,
    maxBytes: number = RedriveLimits.READ_BUDGET_BYTES,
  ): Promise<DeadLetterPeek> {
    return this.withChannel(`read ${source}`, async (channel) => {
      const reported = await this.depthOf(channel, source);
      // Not bounded by the reported depth: a quorum queue reports messages another channel just returned
      // a moment after they can be got again.
      const budget = new ReadBudget(maxBytes);
      const messages = await getMessages(channel, source, limit, budget);
      const depth = Math.max(reported, messages.length);
      const cutOff = cutOffOf(budget, limit, depth, messages.length);
      return {
        depth,
        records: messages.map((m, i) => rabbitRecord(source, m, i)),
        ...(cutOff ? { cutOff } : {}),
      };
    }); // closing the channel returns every message, unacked, to its place (head first, quorum queues too)
  }

  async peekAt(
    source: string,
    position: MessagePosition,
    maxBytes: number = RedriveLimits.READ_BUDGET_BYTES,
  ): Promise<DeadLetterRecord | undefined> {
    if (position.kind !== 'queue') return undefined;
    return this.withChannel(`read ${source}`, async (channel) => {
      await this.depthOf(channel, source);
      // Bounded as a page's read is: a message the pages cannot list within the budget is not opened either.
      const budget = new ReadBudget(maxBytes);
      const messages = await getMessages(channel, source, position.index + 1, budget);
      const message = messages[position.index];
      return message ? rabbitRecord(source, message, position.index) : undefined;
    }); // every message read goes back to its place when the channel closes
  }

  async scan(
    source: string,
    visit: (record: DeadLetterRecord) => Promise<boolean> | boolean,
  ): Promise<{ readonly depth: number }> {
    return this.withChannel(`read ${source}`, async (channel) => {
      const depth = await this.depthOf(channel, source);
      // Each message is visited and let go: the channel holds them unacked, this process holds none.
      for (let index = 0; ; index++) {
        const message = await channel.get(source, { noAck: false });
        if (message === false) break;
        if (!(await visit(rabbitRecord(source, message, index)))) break;
      }
      return { depth };
    }); // closing the channel returns every message, unacked, to its place
  }

  async checkTarget(source: string, target: string): Promise<void> {
    if (!(await this.check(target))) throw new RedriveTargetNotFoundError(source, target);
  }

  async move(
    plan: RedrivePlan,
    copyOf: CopiesOf,
    checkRead: (records: readonly DeadLetterRecord[]) => void,
  ): Promise<MessageRedriveOutcome[]> {
    return this.withChannel(`read ${plan.source}`, async (channel) => {
      await this.depthOf(channel, plan.source);
      // A selection's messages need not be contiguous: read up to the last one, move only the planned ones;
      // the others go back to their place, in order, when the channel closes (as after a plan's read).
      const indexes = plan.messages.map((m, i) => (m.position.kind === 'queue' ? m.position.index : i));
      const { got, read } = await getPlanned(channel, plan.source, indexes);
      const planned = indexes.map((index, i) => {
        const message = got.get(index);
        if (!message) {
          throw new RedrivePlanStaleError(plan.source, `${read} messages left, the plan reaches #${index}`);
        }
        const record = rabbitRecord(plan.source, message, index);
        if (fingerprintOf(record.wire) !== plan.messages[i].fingerprint) {
          throw new RedrivePlanStaleError(
            plan.source,
            `the message at position ${index} is not the planned one`,
          );
        }
        return { record, message };
      });
      const records = planned.map((p) => p.record);
      checkRead(records);
      const copies = records.map((record) => copiesOf(copyOf, record));
      const published = await this.transport.publishCopies(copies.flat());
      // A message counts as confirmed when every copy of it is (an edit: its archived original and its edit).
      let next = 0;
      const outcomes = copies.map((own) => {
        const mine = published.slice(next, (next += own.length));
        return mine.find((outcome) => outcome.status !== 'CONFIRMED') ?? mine[0];
      });
      return outcomes.map((outcome, i): MessageRedriveOutcome => {
        const { position, messageId } = plan.messages[i];
        if (outcome.status !== 'CONFIRMED') {
          return {
            position,
            messageId,
            status: 'NOT_CONFIRMED',
            error: `${outcome.status}: ${outcome.error.message}`,
          };
        }
        try {
          channel.ack(planned[i].message); // only now, after the target confirmed the copy
          return { position, messageId, status: 'REDRIVEN' };
        } catch (error) {
          return { position, messageId, status: 'NOT_SETTLED', error: (error as Error).message };
        }
      });
    }); // closing the channel returns the unplanned and the unconfirmed ones, unacked, to their place
  }

  /** A durable classic queue: nobody consumes it, an operator reads it like a DLQ. */
  async ensureArchive(source: string, archive: string): Promise<void> {
    await this.withChannel(`create ${archive} for ${source}`, async (channel) => {
      await channel.assertQueue(archive, { durable: true });
    });
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  private async depthOf(channel: amqp.Channel, queue: string): Promise<number> {
    try {
      return (await channel.checkQueue(queue)).messageCount;
    } catch (error) {
      if (replyCode(error) === NOT_FOUND) throw new DeadLetterQueueNotFoundError(queue);
      throw error;
    }
  }

  /** A queue's state, or undefined when it does not exist (a failed passive declare closes the channel). */
  private async check(queue: string): Promise<amqp.Replies.AssertQueue | undefined> {
    return this.withChannel(`inspect ${queue}`, async (channel) => {
      try {
        return await channel.checkQueue(queue);
      } catch (error) {
        if (replyCode(error) === NOT_FOUND) return undefined;
        throw error;
      }
    });
  }

  private async withChannel<T>(operation: string, work: (channel: amqp.Channel) => Promise<T>): Promise<T> {
    return asAdmin(this.credential.principal, operation, async () => {
      const model = await this.transport.connection.get();
      const channel = await model.createChannel();
      channel.on('error', () => undefined); // failures surface as rejected operations
      try {
        return await work(channel);
      } finally {
        await channel.close().catch(() => undefined);
      }
    });
  }
}

/**
 * Up to `count` messages from the head by `basic.get`, unacked (closing the channel returns them all). With
 * a `budget`, stops once the bytes got reach it: the message that crossed it is not kept (it goes back with
 * the rest), so the read holds at most the budget plus that one message for a moment.
 */
async function getMessages(
  channel: amqp.Channel,
  queue: string,
  count: number,
  budget?: ReadBudget,
): Promise<amqp.GetMessage[]> {
  const messages: amqp.GetMessage[] = [];
  while (messages.length < count && !budget?.exhausted) {
    const message = await channel.get(queue, { noAck: false });
    if (message === false) break;
    if (budget && !budget.admit(amqpMessageBytes(message))) break;
    messages.push(message);
  }
  return messages;
}

/**
 * The messages at `indexes` from the head by `basic.get`, unacked, and how many were got: the others got on
 * the way stay unacked on the channel (closing it returns them) but are not held here, so a plan whose
 * messages lie deep in a long queue takes the memory of its own messages only.
 */
async function getPlanned(
  channel: amqp.Channel,
  queue: string,
  indexes: readonly number[],
): Promise<{ got: Map<number, amqp.GetMessage>; read: number }> {
  const wanted = new Set(indexes);
  const last = Math.max(-1, ...indexes);
  const got = new Map<number, amqp.GetMessage>();
  let read = 0;
  while (read <= last) {
    const message = await channel.get(queue, { noAck: false });
    if (message === false) break;
    if (wanted.has(read)) got.set(read, message);
    read++;
  }
  return { got, read };
}

/** A got message's size as a read budget counts it: body and headers. */
export function amqpMessageBytes(message: amqp.Message): number {
  return message.content.length + headerValueBytes(message.properties.headers ?? {});
}
