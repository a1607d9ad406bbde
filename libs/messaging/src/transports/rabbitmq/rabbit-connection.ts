import { Logger } from '@nestjs/common';
import * as amqp from 'amqplib';
import { BrokerRefusal, RefusalLog } from '../broker-refusal';

/**
 * One AMQP connection, opened on first use and again after it drops. Users of the connection learn of a
 * drop through `onLost` and open new channels with `get()`.
 */
export class RabbitConnection {
  private readonly logger = new Logger(RabbitConnection.name);
  private model?: Promise<amqp.ChannelModel>;
  private readonly lostListeners = new Set<(error?: Error) => void>();
  private closing = false;
  private lastError?: string;
  private isOpen = false;
  /** A login or virtual host RabbitMQ refused: said once as an error, kept for the health check. */
  private readonly refusals = new RefusalLog('rabbitmq', this.logger);

  constructor(
    private readonly url: string,
    private readonly heartbeatSeconds: number,
    private readonly connectionName: string,
  ) {}

  /** The open connection; connects if there is none. Rejects when the broker cannot be reached. */
  get(): Promise<amqp.ChannelModel> {
    if (this.closing) return Promise.reject(new Error('The RabbitMQ connection is closing.'));
    this.model ??= this.open();
    return this.model;
  }

  get connected(): boolean {
    return this.isOpen;
  }

  get error(): string | undefined {
    return this.lastError;
  }

  /** The permanent refusal standing since the last failed connect, if any. */
  get refusal(): BrokerRefusal | undefined {
    return this.refusals.current;
  }

  /** Called when the connection is lost (not when we close it). */
  onLost(listener: (error?: Error) => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closing = true;
    const model = this.model;
    this.model = undefined;
    await model?.then((m) => m.close()).catch(() => undefined);
  }

  private async open(): Promise<amqp.ChannelModel> {
    try {
      const model = await amqp.connect(withHeartbeat(this.url, this.heartbeatSeconds), {
        timeout: 5_000,
        // Nagle off: a publish (or an ack) goes out when written, not after the ACK of the segment before.
        noDelay: true,
        clientProperties: { connection_name: this.connectionName },
      });
      model.on('error', (error: Error) => (this.lastError = error.message));
      model.on('close', (error?: Error) => {
        this.isOpen = false;
        this.model = undefined;
        if (this.closing) return;
        this.lastError = error?.message ?? 'connection closed';
        this.logger.warn(`RabbitMQ connection lost: ${this.lastError}`);
        this.lostListeners.forEach((listener) => listener(error));
      });
      model.on('blocked', (reason: string) => this.logger.warn(`RabbitMQ blocked the connection: ${reason}`));
      this.isOpen = true;
      this.lastError = undefined;
      this.refusals.recovered();
      return model;
    } catch (error) {
      this.model = undefined;
      this.lastError = (error as Error).message;
      this.refusals.failure(error);
      throw error;
    }
  }
}

/** Adds `heartbeat` to the URL's query unless the URL sets it already. */
function withHeartbeat(url: string, seconds: number): string {
  const parsed = new URL(url);
  if (!parsed.searchParams.has('heartbeat')) parsed.searchParams.set('heartbeat', String(seconds));
  return parsed.toString();
}
