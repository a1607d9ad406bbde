import { Injectable, Provider, Type } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Column, Entity, PrimaryGeneratedColumn, Repository } from 'typeorm';
import { z } from 'zod';
import { defineEvent, EventDefinition, Outbox, OutboxService } from 'nest-reliable-messaging';

/** A business table for the outbox suites. */
@Entity({ name: 'orders' })
export class Order {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'text' })
  customer!: string;

  @Column({ type: 'integer' })
  amount!: number;
}

export const orderPlacedSchema = z.object({
  orderId: z.number().int(),
  customer: z.string().min(1),
  amount: z.number().int().nonnegative(),
  seq: z.number().int().optional(),
});

export type OrderPlacedEvent = EventDefinition<'OrderPlaced', z.output<typeof orderPlacedSchema>>;

/** An OrderPlaced event on a destination of the suite's own. */
export function orderPlaced(destination: string): OrderPlacedEvent {
  return defineEvent({ type: 'OrderPlaced', destination, schema: orderPlacedSchema, key: (e) => e.customer });
}

/** Lets each suite inject the event with its own destination. */
@Injectable()
export class OrderEventHolder {
  constructor(readonly event: OrderPlacedEvent) {}
}

/** Writes an order and its event with the repositories an app already has. */
@Injectable()
export class OrdersService {
  constructor(
    @InjectRepository(Order) private readonly orders: Repository<Order>,
    private readonly outbox: OutboxService,
    private readonly event: OrderEventHolder,
  ) {}

  @Outbox()
  async place(customer: string, amount: number, seq?: number): Promise<Order> {
    const order = await this.orders.save(this.orders.create({ customer, amount }));
    await this.outbox.add(this.event.event, { orderId: order.id, customer, amount, seq });
    return order;
  }

  /** Places an order whose event carries the message id given (as an application may give its own). */
  @Outbox()
  async placeWithId(customer: string, seq: number, messageId: string): Promise<Order> {
    const order = await this.orders.save(this.orders.create({ customer, amount: 1 }));
    await this.outbox.add(this.event.event, { orderId: 0, customer, amount: 1, seq }, { messageId });
    return order;
  }

  /** Places an order and then fails: nothing may survive. */
  @Outbox()
  async placeThenFail(customer: string): Promise<never> {
    await this.place(customer, 1);
    throw new Error('business rule broken after the write');
  }

  /** Two nested @Outbox calls: both join this one transaction. */
  @Outbox()
  async placeTwo(customer: string): Promise<Order[]> {
    return [await this.place(customer, 1, 1), await this.place(customer, 2, 2)];
  }

  /** Not decorated: must refuse to write an outbox row. */
  async placeWithoutTransaction(customer: string): Promise<void> {
    await this.outbox.add(this.event.event, { orderId: 0, customer, amount: 0 });
  }

  @Outbox()
  async placeInvalid(customer: string): Promise<void> {
    await this.orders.save(this.orders.create({ customer, amount: 5 }));
    await this.outbox.add(this.event.event, { orderId: 1, customer, amount: -5 });
  }
}

/** What an app that places orders needs: the orders table, OrdersService and its event on `destination`. */
export function ordersWriter(destination: string): { entities: Type[]; providers: Provider[] } {
  return {
    entities: [Order],
    providers: [
      OrdersService,
      { provide: OrderEventHolder, useValue: new OrderEventHolder(orderPlaced(destination)) },
    ],
  };
}
