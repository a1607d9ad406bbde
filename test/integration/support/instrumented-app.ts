/**
 * An application as `nest new` makes it on Nest 12 with `@nestjs/observe` (issue 37 item 1): `NestFactory.create`
 * with an `instrument` that wraps every provider the library registers in a Proxy, over the real database and
 * broker. Configured by environment: DATABASE_URL, SCHEMA, TRANSPORT (kafka|rabbitmq), RELAY (polling|logical),
 * INSTRUMENT (observe: `@nestjs/observe`'s own; proxy: a generic Proxy tracer, see `proxyInstrument`),
 * DESTINATION, GROUP. It places one order through the outbox, waits until its handler ran, reads the health
 * checks and the status, prints `RESULT <json>` and READY; on SIGTERM it closes and prints CLOSED.
 * Run with: node -r ts-node/register/transpile-only -r tsconfig-paths/register instrumented-app.ts
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  IdempotentHandler,
  MessageContext,
  MessagingHealthIndicator,
  MessagingMigrations,
  MessagingModule,
  MessagingStatus,
} from 'nest-reliable-messaging';
import { LOCAL_KEY_SECRET } from '../../../tools/infra/local-secrets';
import { infraEnv } from '../../harness/infra';
import { Order, orderPlaced, OrderEventHolder, OrdersService } from './orders.fixture';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const event = orderPlaced(env('DESTINATION'));
const handled: string[] = [];

@Injectable()
class OrdersHandler {
  @IdempotentHandler(event, { group: env('GROUP') })
  async onOrderPlaced(order: { customer: string }, context: MessageContext): Promise<void> {
    handled.push(`${order.customer}:${context.attempt}`);
  }
}

/**
 * A tracer of the plainest kind: every provider (object or function) comes back as a Proxy whose `get` hands
 * out a wrapper of each method that calls it with the proxy as `this`; functions are wrapped in a Proxy with
 * an `apply` trap. What it breaks in a library is what any such tracer breaks: a frozen object's (or a
 * non-configurable, non-writable) method cannot be replaced (the Proxy invariant throws), native `#private`
 * members refuse the proxy as `this`, and identity checks see two objects. Objects with internal slots (a
 * `Map`, Nest's own `ModulesContainer`) are left alone, as every tracer that works at all has to.
 */
function proxyInstrument(): { instanceDecorator: (instance: unknown) => unknown } {
  const wrap = (target: object): object =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        const value: unknown = Reflect.get(obj, prop, receiver);
        if (typeof value !== 'function' || prop === 'constructor') return value;
        if (Function.prototype.toString.call(value).startsWith('class')) return value; // a class is data here
        return function traced(this: unknown, ...args: unknown[]): unknown {
          return (value as (...a: unknown[]) => unknown).apply(this, args);
        };
      },
    });
  return {
    instanceDecorator: (instance) => {
      if (typeof instance === 'function') {
        return new Proxy(instance, {
          apply: (fn, self, args: unknown[]): unknown => Reflect.apply(fn, self, args) as unknown,
        });
      }
      if (instance === null || typeof instance !== 'object') return instance;
      const slotted = [Map, Set, WeakMap, WeakSet, Date, Promise].some((type) => instance instanceof type);
      return slotted ? instance : wrap(instance);
    },
  };
}

async function instrument(): Promise<{ instanceDecorator: (instance: unknown) => unknown }> {
  if (env('INSTRUMENT') === 'proxy') return proxyInstrument();
  // What today's template puts in app.module.ts; only the instrument (the module's agent would call home).
  const { createObserveModule } = await import('@nestjs/observe');
  return createObserveModule().ObserveInstrument as { instanceDecorator: (instance: unknown) => unknown };
}

async function main(): Promise<void> {
  const logical = env('RELAY') === 'logical';
  @Module({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: env('DATABASE_URL'),
        schema: env('SCHEMA'),
        entities: [Order],
        synchronize: true,
        migrations: MessagingMigrations,
        migrationsRun: true,
        logging: false,
      }),
      TypeOrmModule.forFeature([Order]),
      MessagingModule.forRoot({
        serviceName: env('GROUP'),
        topology: 'declare',
        deadLetter: { keySecret: LOCAL_KEY_SECRET },
        transport:
          env('TRANSPORT') === 'rabbitmq'
            ? { kind: 'rabbitmq', url: infraEnv().amqpUrl }
            : { kind: 'kafka', brokers: infraEnv().kafkaBrokers },
        relay: logical ? { mode: 'logical', pollIntervalMs: 500 } : { pollIntervalMs: 200 },
      }),
    ],
    providers: [
      OrdersService,
      { provide: OrderEventHolder, useValue: new OrderEventHolder(event) },
      OrdersHandler,
    ],
  })
  class AppModule {}

  const app = await NestFactory.create(AppModule, {
    instrument: await instrument(),
    logger: ['error', 'warn', 'log'],
  });
  await app.listen(0, '127.0.0.1');
  await app.get(OrdersService).place('ann', 5, 1);
  const deadline = Date.now() + 60_000;
  while (handled.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const health = app.get(MessagingHealthIndicator);
  const result = {
    handled,
    health: {
      ...(await health.database()),
      ...(await health.broker()),
      ...(await health.outboxBacklog()),
      ...(await health.relay()),
      ...health.heldMessages(),
    },
    status: app.get(MessagingStatus).snapshot(),
  };
  // The handler before READY: the test signals as soon as it reads it (a CI run's SIGTERM came between the
  // two and ended the process by the default action).
  process.on('SIGTERM', () => {
    void app.close().then(
      () => {
        process.stdout.write('CLOSED\n');
        process.exit(0);
      },
      (error: unknown) => {
        process.stderr.write(`close failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  });
  process.stdout.write(`RESULT ${JSON.stringify(result)}\nREADY\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
