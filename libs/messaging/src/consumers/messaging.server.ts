import { Injectable, Logger } from '@nestjs/common';
import { CustomTransportStrategy, Server } from '@nestjs/microservices';
import { ConsumerOrchestrator } from './consumer-orchestrator';
import { HandlerRegistry } from './handler-registry';

/**
 * Runs the library's consumers as a Nest microservice, with Nest's lifecycle:
 *
 * ```ts
 * app.connectMicroservice({ strategy: app.get(MessagingServer) });
 * await app.startAllMicroservices();
 * ```
 * (set `consumers.autoStart: false` so that they start here rather than at bootstrap). Handlers are the
 * `@IdempotentHandler()` methods; an `@EventPattern()` on the same method is accepted but routes nothing,
 * because offsets and acks stay under the library's control (Nest's own Kafka and RabbitMQ servers
 * auto-commit and auto-ack).
 */
@Injectable()
export class MessagingServer extends Server implements CustomTransportStrategy {
  private readonly log = new Logger(MessagingServer.name);

  /** @internal Created by Nest; get it with `app.get(MessagingServer)`. */
  constructor(
    private readonly orchestrator: ConsumerOrchestrator,
    private readonly registry: HandlerRegistry,
  ) {
    super();
  }

  /** Starts the consumers; Nest calls it from `startAllMicroservices()`. */
  async listen(callback: (...optionalParams: unknown[]) => void): Promise<void> {
    try {
      await this.orchestrator.requestStart();
      this.orchestrator.afterStart(() => this.warnAboutPatternsWithoutHandler());
      callback();
    } catch (error) {
      callback(error);
    }
  }

  /** Stops the consumers (in-flight messages finish and are settled). */
  async close(): Promise<void> {
    await this.orchestrator.stop();
  }

  /** Server events are not emitted: the consumers report through logs, health and metrics. */
  on(): void {
    // nothing to register
  }

  /** The consumer orchestrator behind this server. */
  unwrap<T>(): T {
    return this.orchestrator as T;
  }

  private warnAboutPatternsWithoutHandler(): void {
    const destinations = new Set<string>();
    for (const group of this.registry.groupNames()) {
      for (const destination of this.registry.destinationsOf(group).keys()) destinations.add(destination);
    }
    for (const pattern of this.getHandlers().keys()) {
      if (!destinations.has(pattern)) {
        this.log.warn(
          `@EventPattern('${pattern}') has no @IdempotentHandler for that destination: nothing consumes it.`,
        );
      }
    }
  }
}
