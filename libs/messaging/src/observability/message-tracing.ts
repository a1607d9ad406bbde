import { Injectable } from '@nestjs/common';
import type { Attributes, Span } from '@opentelemetry/api';
import { openTelemetry } from './open-telemetry';
import { WireMessage } from '../envelope/wire-message';
import { MessageHeaders } from '../envelope/message-headers';
import { PublishOutcome } from '../transports/publish-outcome';

/** Spans of one relay batch: the messages carry their publish span's context; `end` records the outcomes. */
export interface PublishTrace {
  readonly messages: WireMessage[];
  end(outcomes: readonly PublishOutcome[]): void;
}

/**
 * OpenTelemetry spans with the messaging semantic conventions, through `@opentelemetry/api` only: a PRODUCER
 * span per published message, child of the trace that was active when the outbox row was written (its
 * `traceparent` is stored with the row), and a CONSUMER span around each handler, child of that. Without an
 * SDK registered the API hands out non-recording spans and no-op propagation: next to no cost. Without
 * `@opentelemetry/api` installed (an optional peer) there are no spans at all.
 */
@Injectable()
export class MessageTracing {
  private readonly tracer = openTelemetry?.trace.getTracer('nest-reliable-messaging');

  /** Starts a publish span per message and puts its context into the message's trace headers. */
  publish(system: 'kafka' | 'rabbitmq', messages: readonly WireMessage[]): PublishTrace {
    const tracer = this.tracer;
    if (!openTelemetry || !tracer) return { messages: [...messages], end: () => undefined };
    const { propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } = openTelemetry;
    const spans: Span[] = [];
    const traced = messages.map((message) => {
      const parent = propagation.extract(ROOT_CONTEXT, message.headers);
      const span = tracer.startSpan(
        `publish ${message.destination}`,
        { kind: SpanKind.PRODUCER, attributes: attributes(system, 'publish', message) },
        parent,
      );
      spans.push(span);
      const headers = { ...message.headers };
      propagation.inject(trace.setSpan(parent, span), headers);
      return { ...message, headers };
    });
    return {
      messages: traced,
      end: (outcomes) =>
        spans.forEach((span, i) => {
          const outcome = outcomes[i];
          if (outcome && outcome.status !== 'CONFIRMED')
            span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.status });
          span.end();
        }),
    };
  }

  /**
   * Runs `work` in a process span continuing the message's trace; the handler's own spans are its
   * children. A failure marks the span with its category and code (never the error's message).
   */
  async process<T>(
    system: 'kafka' | 'rabbitmq',
    message: WireMessage,
    extra: Attributes,
    work: () => Promise<T>,
  ): Promise<T> {
    if (!openTelemetry || !this.tracer) return work();
    const { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } = openTelemetry;
    const parent = propagation.extract(ROOT_CONTEXT, message.headers);
    const span = this.tracer.startSpan(
      `process ${message.destination}`,
      { kind: SpanKind.CONSUMER, attributes: { ...attributes(system, 'process', message), ...extra } },
      parent,
    );
    try {
      return await context.with(trace.setSpan(parent, span), work);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorKind(error) });
      throw error;
    } finally {
      span.end();
    }
  }
}

function attributes(system: string, operation: 'publish' | 'process', message: WireMessage): Attributes {
  return {
    'messaging.system': system,
    'messaging.operation.type': operation,
    'messaging.operation.name': operation === 'publish' ? 'send' : 'process',
    'messaging.destination.name': message.destination,
    'messaging.message.id': message.headers[MessageHeaders.ID] ?? '',
    'messaging.message.body.size': message.body.length,
  };
}

function errorKind(error: unknown): string {
  const category = (error as { category?: unknown })?.category;
  return typeof category === 'string' ? category : error instanceof Error ? error.name : 'Error';
}
