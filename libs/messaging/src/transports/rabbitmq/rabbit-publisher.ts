import { randomUUID } from 'node:crypto';
import * as amqp from 'amqplib';
import { Clock, systemClock } from '../../common/clock';
import { MessageHeaders } from '../../envelope/message-headers';
import { WireMessage } from '../../envelope/wire-message';
import { UnroutableMessageError } from '../../errors/unroutable-message.error';
import { TopologyMode } from '../../messaging-options.interface';
import { CONFIRMED, outcomesWithin, PublishOutcome } from '../publish-outcome';
import { RabbitConnection } from './rabbit-connection';
import { RabbitTopology } from './rabbit-topology';

/**
 * Publishes on a confirm channel with `mandatory`: a message is CONFIRMED when the broker acks it and did
 * not return it first (RabbitMQ sends basic.return before the ack of an unroutable message), REJECTED when
 * it nacks or returns it, AMBIGUOUS when the channel closes before the answer. A return is matched to its
 * publish by a correlation id of the publish's own (message ids may repeat, or be empty in the copy of an
 * undecodable message). The AMQP timestamp and the confirm deadline come from `clock` (the transport's).
 */
export class RabbitPublisher {
  private channel?: Promise<ChannelState>;
  private current?: ChannelState;

  constructor(
    private readonly connection: RabbitConnection,
    private readonly appId: string,
    private readonly topologyMode: TopologyMode,
    private readonly clock: Pick<Clock, 'now' | 'setTimeout'> = systemClock,
  ) {}

  /**
   * Publishes to each message's destination exchange with the event type as routing key, or, with
   * `copiesVia`, to the queue its destination names: through the exchange `copiesVia` gives for that queue
   * (a group's failure exchange, or the default exchange `''`), the queue's name as routing key. Never
   * rejects: a channel that closed before or during the publish makes its messages AMBIGUOUS (those sent
   * before may have arrived), and a publish not started when `signal` aborts is not sent.
   */
  async publish(
    messages: readonly WireMessage[],
    copiesVia?: (queue: string) => string,
    signal?: AbortSignal,
    timeoutMs = 15_000,
  ): Promise<PublishOutcome[]> {
    let state: ChannelState;
    try {
      state = await this.getChannel();
      if (!copiesVia) await state.topology.exchanges([...new Set(messages.map((m) => m.destination))]);
    } catch (error) {
      this.channel = undefined;
      return messages.map(() => ({ status: 'REJECTED', error: asError(error) }));
    }
    return outcomesWithin(
      async () => {
        const confirmations = messages.map((message) => this.confirm(state, message, copiesVia, signal));
        // The deadline covers waiting for the channel to drain as well.
        await state.drained;
        return Promise.all(confirmations);
      },
      messages.length,
      timeoutMs,
      'publisher confirm',
      this.clock,
    );
  }

  /** Publishes one message and waits for the broker's answer to it. Never rejects. */
  private async confirm(
    state: ChannelState,
    message: WireMessage,
    copiesVia: ((queue: string) => string) | undefined,
    signal?: AbortSignal,
  ): Promise<PublishOutcome> {
    const { channel } = state;
    if (signal?.aborted)
      return { status: 'AMBIGUOUS', error: new Error('not sent: the caller stopped waiting') };
    const messageId = message.headers[MessageHeaders.ID] ?? '';
    const correlationId = randomUUID();
    // A message goes to its destination's exchange by its type; a copy to a queue, by the queue's name.
    const exchange = copiesVia ? copiesVia(message.destination) : message.destination;
    const routingKey = copiesVia ? message.destination : (message.headers[MessageHeaders.TYPE] ?? '');
    let error: Error | undefined;
    try {
      error = await new Promise<Error | undefined>((resolve) => {
        // amqplib throws here when the channel has closed (or is closing): the executor's throw rejects.
        const ok = channel.publish(
          exchange,
          routingKey,
          message.body,
          {
            mandatory: true,
            persistent: true,
            contentType: message.headers[MessageHeaders.CONTENT_TYPE],
            messageId,
            correlationId,
            type: message.headers[MessageHeaders.TYPE],
            timestamp: Math.floor(this.clock.now() / 1000),
            appId: this.appId,
            headers:
              message.key === null
                ? { ...message.headers }
                : { ...message.headers, [MessageHeaders.KEY]: message.key },
          },
          (answer: unknown) => resolve(answer ? asError(answer) : undefined),
        );
        if (!ok) state.drained = state.drained.then(() => drainedOrClosed(channel));
      });
    } catch (thrown) {
      // Not sent; but the channel's earlier publishes, this batch's too, may or may not have arrived.
      return {
        status: 'AMBIGUOUS',
        error: new Error(`The channel closed before the publish: ${asError(thrown).message}`, {
          cause: thrown,
        }),
      };
    }
    if (error) {
      return state.closed ? { status: 'AMBIGUOUS', error } : { status: 'REJECTED', error };
    }
    if (state.returned.delete(correlationId)) {
      return {
        status: 'REJECTED',
        error: new UnroutableMessageError(exchange, routingKey),
      };
    }
    return CONFIRMED;
  }

  async close(): Promise<void> {
    const channel = this.channel;
    this.channel = undefined;
    await channel?.then((s) => s.channel.close()).catch(() => undefined);
  }

  private getChannel(): Promise<ChannelState> {
    this.channel ??= (async () => {
      const model = await this.connection.get();
      const channel = await model.createConfirmChannel();
      const state: ChannelState = {
        channel,
        returned: new Set<string>(),
        closed: false,
        drained: Promise.resolve(),
        topology: new RabbitTopology(channel, this.topologyMode),
      };
      channel.on('return', (message: amqp.Message) => {
        const { correlationId } = message.properties as { correlationId?: unknown };
        if (typeof correlationId === 'string') state.returned.add(correlationId);
      });
      channel.on('error', () => undefined);
      channel.on('close', () => {
        state.closed = true;
        if (this.current !== state) return;
        this.current = undefined;
        this.channel = undefined;
      });
      this.current = state;
      return state;
    })();
    this.channel.catch(() => (this.channel = undefined));
    return this.channel;
  }
}

interface ChannelState {
  readonly channel: amqp.ConfirmChannel;
  /** Correlation ids of publishes the broker returned as unroutable, until their ack arrives. */
  readonly returned: Set<string>;
  closed: boolean;
  drained: Promise<void>;
  readonly topology: RabbitTopology;
}

/** Resolves when the channel can take more (`drain`), or closed (then nothing more is sent on it). */
function drainedOrClosed(channel: amqp.ConfirmChannel): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      channel.off('drain', done);
      channel.off('close', done);
      resolve();
    };
    channel.on('drain', done);
    channel.on('close', done);
  });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
