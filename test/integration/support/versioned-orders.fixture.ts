import { Inject, Injectable, Type } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Column, Entity, PrimaryGeneratedColumn, Repository } from 'typeorm';
import { z } from 'zod';
import {
  defineEvent,
  EventDefinition,
  IdempotentHandler,
  MessageContext,
  Outbox,
  OutboxService,
} from 'nest-reliable-messaging';

/** OrderPlaced as producers wrote it first: an amount in whole euros. */
export const orderV1Schema = z.object({
  orderId: z.number().int(),
  customer: z.string().min(1),
  amount: z.number().int(),
  seq: z.number().int(),
});
export type OrderV1 = z.output<typeof orderV1Schema>;

/** OrderPlaced version 2: the amount in cents and a currency (a v1 consumer's schema refuses it). */
export const orderV2Schema = z.object({
  orderId: z.number().int(),
  customer: z.string().min(1),
  amountCents: z.number().int(),
  currency: z.string().length(3),
  seq: z.number().int(),
});
export type OrderV2 = z.output<typeof orderV2Schema>;

/** Version 1 of OrderPlaced on `destination`: no version declared. */
export function orderPlacedV1(destination: string): EventDefinition<'OrderPlaced', OrderV1> {
  return defineEvent({ type: 'OrderPlaced', destination, schema: orderV1Schema, key: (o) => o.customer });
}

/** Version 2 of OrderPlaced on `destination`, taking v1 through an upcaster (euros → cents, EUR). */
export function orderPlacedV2(
  destination: string,
  upcaster: (v1: OrderV1) => unknown = (v1) => ({
    orderId: v1.orderId,
    customer: v1.customer,
    amountCents: v1.amount * 100,
    currency: 'EUR',
    seq: v1.seq,
  }),
): EventDefinition<'OrderPlaced', OrderV2> {
  return defineEvent({
    type: 'OrderPlaced',
    destination,
    version: 2,
    schema: orderV2Schema,
    key: (o) => o.customer,
    upcasters: { 1: upcaster },
  });
}

/** What a versioned consumer wrote, in its handler's transaction. */
@Entity({ name: 'deploy_handled' })
export class DeployHandled {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'message_id', type: 'uuid' })
  messageId!: string;

  @Column({ type: 'text' })
  instance!: string;

  @Column({ name: 'consumer_group', type: 'text' })
  group!: string;

  /** The version the message came in (`MessageContext.eventVersion`). */
  @Column({ name: 'event_version', type: 'integer' })
  eventVersion!: number;

  @Column({ name: 'amount_cents', type: 'integer' })
  amountCents!: number;

  @Column({ type: 'text', nullable: true })
  currency!: string | null;

  @Column({ type: 'integer' })
  seq!: number;
}

/** The injection token of the consumer instance's name (it goes into every row it writes). */
export const INSTANCE_NAME = 'INSTANCE_NAME';

/** A consumer of version 1 in `group`: an instance not upgraded yet. */
export function consumerV1(destination: string, group: string): Type {
  @Injectable()
  class OrdersConsumerV1 {
    constructor(
      @InjectRepository(DeployHandled) private readonly handled: Repository<DeployHandled>,
      @Inject(INSTANCE_NAME) private readonly instance: string,
    ) {}

    @IdempotentHandler(orderPlacedV1(destination), { group })
    async onOrder(order: OrderV1, context: MessageContext): Promise<void> {
      await this.handled.save(
        this.handled.create({
          messageId: context.messageId,
          instance: this.instance,
          group,
          eventVersion: context.eventVersion,
          amountCents: order.amount * 100,
          currency: null,
          seq: order.seq,
        }),
      );
    }
  }
  return OrdersConsumerV1;
}

/** A consumer of version 2 in `group` (v1 through the upcaster): an upgraded instance. */
export function consumerV2(
  destination: string,
  group: string,
  event: EventDefinition<'OrderPlaced', OrderV2> = orderPlacedV2(destination),
): Type {
  @Injectable()
  class OrdersConsumerV2 {
    constructor(
      @InjectRepository(DeployHandled) private readonly handled: Repository<DeployHandled>,
      @Inject(INSTANCE_NAME) private readonly instance: string,
    ) {}

    @IdempotentHandler(event, { group })
    async onOrder(order: OrderV2, context: MessageContext): Promise<void> {
      await this.handled.save(
        this.handled.create({
          messageId: context.messageId,
          instance: this.instance,
          group,
          eventVersion: context.eventVersion,
          amountCents: order.amountCents,
          currency: order.currency,
          seq: order.seq,
        }),
      );
    }
  }
  return OrdersConsumerV2;
}

/** Writes OrderPlaced messages of one version through the outbox; `place` returns the message id. */
export interface VersionedProducer {
  place(payload: object): Promise<string>;
}

/** A producer of `event` (version 1 or 2) through the outbox, in a transaction of its own per message. */
export function producerOf(
  event: EventDefinition<'OrderPlaced', OrderV1 | OrderV2>,
): Type<VersionedProducer> {
  @Injectable()
  class OrdersProducer implements VersionedProducer {
    constructor(private readonly outbox: OutboxService) {}

    @Outbox()
    place(payload: object): Promise<string> {
      return this.outbox.add(event, payload as OrderV1 & OrderV2);
    }
  }
  return OrdersProducer;
}
