import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { TestingModule } from '@nestjs/testing';
import { eventually } from '../../harness/eventually';
import { KafkaTopics } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { createMessagingApp, kafkaTransport } from '../support/messaging-app';
import { ConsumerProbe, HandledOrder, ordersConsumer } from '../support/orders-consumer.fixture';
import { Order, orderPlaced, OrdersService, ordersWriter } from '../support/orders.fixture';

describe('Trace context from the request to the handler', () => {
  const exporter = new InMemorySpanExporter();
  const topics = new KafkaTopics();
  let schema: TestSchema;
  let app: TestingModule;
  let topic: string;
  let group: string;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    schema = await createTestSchema('tracing');
    topic = await topics.create(uniqueName('traced'), 1);
    group = uniqueName('g');
    topics.track(`${topic}.${group}.dlq`);
    app = await createMessagingApp({
      schema: schema.name,
      transport: kafkaTransport(),
      entities: [Order, HandledOrder],
      providers: [
        ...ordersWriter(topic).providers,
        { provide: ConsumerProbe, useValue: new ConsumerProbe() },
        ordersConsumer(orderPlaced(topic), group),
      ],
    });
  });

  afterAll(async () => {
    await app.close();
    await topics.cleanup();
    await schema.drop();
    // The API's globals live per process: leave the next suites in this worker without an SDK.
    trace.disable();
    context.disable();
    propagation.disable();
  });

  // claim: C-85
  it('stores the request trace with the outbox row and continues it in publish and process spans', async () => {
    const tracer = trace.getTracer('test');
    const request = tracer.startSpan('POST /orders', { kind: SpanKind.SERVER });
    const traceId = request.spanContext().traceId;
    await context.with(trace.setSpan(context.active(), request), () => app.get(OrdersService).place('t', 1));
    request.end();

    const spans = await eventually(() => {
      const finished = exporter.getFinishedSpans();
      const process = finished.find((s) => s.name === `process ${topic}`);
      expect(process).toBeDefined();
      return finished;
    });
    const publish = spans.find((s) => s.name === `publish ${topic}`);
    const process = spans.find((s) => s.name === `process ${topic}`);
    expect(publish?.spanContext().traceId).toBe(traceId);
    expect(publish?.kind).toBe(SpanKind.PRODUCER);
    expect(publish?.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(process?.spanContext().traceId).toBe(traceId);
    expect(process?.kind).toBe(SpanKind.CONSUMER);
    expect(process?.parentSpanContext?.spanId).toBe(publish?.spanContext().spanId);
    expect(process?.attributes).toMatchObject({
      'messaging.system': 'kafka',
      'messaging.operation.type': 'process',
      'messaging.destination.name': topic,
      'messaging.consumer.group.name': group,
    });
    expect(publish?.attributes['messaging.message.id']).toBe(process?.attributes['messaging.message.id']);
  });
});
