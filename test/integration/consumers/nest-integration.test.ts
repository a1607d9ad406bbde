import {
  CallHandler,
  CanActivate,
  Controller,
  ExecutionContext,
  INestApplication,
  Injectable,
  Logger,
  NestInterceptor,
  PipeTransform,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Observable } from 'rxjs';
import { z } from 'zod';
import {
  defineEvent,
  EventPayload,
  IdempotentHandler,
  MessageContext,
  MessagingMigrations,
  MessagingModule,
  newMessageId,
} from 'nest-reliable-messaging';
import { MessagingServer } from 'nest-reliable-messaging/microservices';
import { eventually } from '../../harness/eventually';
import { LOCAL_KEY_SECRET } from '../../../tools/infra/local-secrets';
import { infraEnv } from '../../harness/infra';
import { KafkaTopics, testKafka } from '../../harness/kafka';
import { uniqueName } from '../../harness/names';
import { createTestSchema, TestSchema } from '../../harness/postgres';
import { committedTotal, RawKafkaProducer } from '../support/kafka-wire';
import { orderMessage, withBody } from '../support/raw-messages';

const topic = uniqueName('nest_orders');
/** A pattern no @IdempotentHandler consumes: reported at startup. */
const orphanPattern = uniqueName('nest_orphan');
const group = uniqueName('nest_g');
const OrderPlaced = defineEvent({
  type: 'OrderPlaced',
  destination: topic,
  schema: z.object({
    orderId: z.number().int(),
    customer: z.string(),
    amount: z.number(),
    seq: z.number().optional(),
  }),
  key: (order) => order.customer,
});

/** What the handlers saw, in order. */
class Seen {
  readonly payloads: Array<EventPayload<typeof OrderPlaced>> = [];
  readonly contexts: MessageContext[] = [];
  readonly auditGroupSeqs: number[] = [];
  intercepted = 0;
  guarded = 0;
}
const seen = new Seen();

@Injectable()
class CountingInterceptor implements NestInterceptor {
  constructor(private readonly seen: Seen) {}
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'rpc') this.seen.intercepted += 1;
    return next.handle();
  }
}

/** Lets every message through, counting the RPC calls it was asked about. */
class CountingGuard implements CanActivate {
  constructor(private readonly seen: Seen) {}
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() === 'rpc') this.seen.guarded += 1;
    return true;
  }
}

/** Marks the payload it passed, so the handler shows it got the pipe's output. */
class MarkingPipe implements PipeTransform {
  transform(value: unknown): unknown {
    return { ...(value as object), piped: true };
  }
}

@Controller()
class OrdersController {
  constructor(private readonly seen: Seen) {}

  // On a controller, Nest resolves enhancers given as instances (or global ones); see the README.
  @EventPattern<string>(topic) // a plain pattern (Nest 12 also types patterns by an events map)
  @IdempotentHandler(OrderPlaced, { group })
  @UseInterceptors(new CountingInterceptor(seen))
  @UseGuards(new CountingGuard(seen))
  async onOrderPlaced(
    @Payload(new MarkingPipe()) order: EventPayload<typeof OrderPlaced>,
    @Ctx() context: MessageContext,
  ): Promise<void> {
    this.seen.payloads.push(order);
    this.seen.contexts.push(context);
  }

  @EventPattern<string>(orphanPattern) // no @IdempotentHandler: nothing consumes it
  async onOrphan(): Promise<void> {}
}

/** A handler on a provider, in a second group: class-referenced enhancers resolve there. */
@Injectable()
class AuditService {
  constructor(private readonly seen: Seen) {}

  @IdempotentHandler(OrderPlaced, { group: `${group}_audit` })
  @UseInterceptors(CountingInterceptor)
  async onOrderPlaced(order: EventPayload<typeof OrderPlaced>): Promise<void> {
    this.seen.auditGroupSeqs.push(order.seq ?? -1);
  }
}

/** Type-level checks: a handler whose parameter does not accept the payload is a compile error. */
export class TypeChecks {
  @IdempotentHandler(OrderPlaced, { group: 'types' })
  async fine(_order: EventPayload<typeof OrderPlaced>): Promise<void> {}

  // @ts-expect-error: the payload is not a string
  @IdempotentHandler(OrderPlaced, { group: 'types' })
  async wrongPayload(_order: string): Promise<void> {}

  // @ts-expect-error: the second parameter must accept a MessageContext
  @IdempotentHandler(OrderPlaced, { group: 'types' })
  async wrongContext(_order: EventPayload<typeof OrderPlaced>, _context: number): Promise<void> {}
}

describe('Consumers in Nest: MessagingServer, @EventPattern, interceptors, pipes, shutdown', () => {
  const kafka = testKafka();
  const topics = new KafkaTopics(kafka);
  const raw = new RawKafkaProducer(kafka);
  let schema: TestSchema;
  let app: INestApplication;
  let startupWarnings: string[] = [];

  beforeAll(async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    schema = await createTestSchema('nest_consumers');
    await topics.create(topic, 1);
    topics.track(`${topic}.${group}.dlq`, `${topic}.${group}_audit.dlq`);
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: infraEnv().databaseUrl,
          schema: schema.name,
          migrations: MessagingMigrations,
          migrationsRun: true,
        }),
        MessagingModule.forRoot({
          serviceName: 'nest-consumer',
          transport: { kind: 'kafka', brokers: infraEnv().kafkaBrokers },
          relay: { enabled: false },
          consumers: { autoStart: false },
          topology: 'declare',
          deadLetter: { keySecret: LOCAL_KEY_SECRET },
        }),
      ],
      controllers: [OrdersController],
      providers: [{ provide: Seen, useValue: seen }, CountingInterceptor, AuditService],
    }).compile();
    app = moduleRef.createNestApplication();
    app.connectMicroservice({ strategy: app.get(MessagingServer) });
    await app.startAllMicroservices();
    await app.init();
    startupWarnings = warn.mock.calls.map(([line]) => String(line));
    warn.mockRestore();
  });

  afterAll(async () => {
    await app.close();
    await raw.stop();
    await topics.cleanup();
    await schema.drop();
  });

  // claim: C-16
  it('reports at startup an @EventPattern no @IdempotentHandler consumes, and only that one', () => {
    const about = startupWarnings.filter((line) => line.includes('@EventPattern('));
    expect(about).toEqual([
      `@EventPattern('${orphanPattern}') has no @IdempotentHandler for that destination: nothing consumes it.`,
    ]);
  });

  // claim: C-15
  it('runs @IdempotentHandler methods under MessagingServer, through guards, interceptors, pipes and param decorators', async () => {
    await raw.send([
      orderMessage(topic, { customer: 'ann', seq: 1 }),
      orderMessage(topic, { customer: 'ann', seq: 2 }),
    ]);
    await eventually(() => expect(seen.payloads.map((p) => p.seq)).toEqual([1, 2]));
    await eventually(() => expect(seen.auditGroupSeqs).toEqual([1, 2]));
    expect(seen.intercepted).toBe(4);
    expect(seen.guarded).toBe(2);
    expect(seen.payloads.map((p) => (p as { piped?: boolean }).piped)).toEqual([true, true]);
    expect(seen.contexts[0]).toMatchObject({
      group,
      destination: topic,
      key: 'ann',
      attempt: 1,
      partition: 0,
    });
    expect(seen.contexts[0].messageId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps the first of two messages with one id and different payloads, and logs the mismatch', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const id = newMessageId();
    const first = orderMessage(topic, { customer: 'bea', seq: 10 }, id);
    await raw.send([
      first,
      withBody(first, JSON.stringify({ orderId: 10, customer: 'bea', amount: 999, seq: 11 })),
    ]);
    await eventually(async () => expect(await committedTotal(kafka, group, topic)).toBe(4));
    expect(seen.payloads.filter((p) => p.customer === 'bea').map((p) => p.seq)).toEqual([10]);
    expect(
      warn.mock.calls.some(
        ([line]) => String(line).includes(id) && String(line).includes('different payload'),
      ),
    ).toBe(true);
    warn.mockRestore();
  });
});
