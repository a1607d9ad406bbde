import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Outbox, OutboxService } from 'nest-reliable-messaging';
import { Repository } from 'typeorm';
import { OrderPlaced } from './order-placed.event.js';
import { Order } from './order.entity.js';
import { PaymentReminder } from './payment-reminder.event.js';

@Injectable()
export class OrdersService {
  constructor(
    @InjectRepository(Order) private readonly orders: Repository<Order>,
    private readonly outbox: OutboxService,
  ) {}

  @Outbox() // one transaction: the order and its event commit together, or neither does
  async place(customerId: number, total: string, remindInMs = 30 * 60_000): Promise<Order> {
    const order = await this.orders.save(this.orders.create({ customerId, total }));
    await this.outbox.add(OrderPlaced, { orderId: order.id, customerId, total });
    // Scheduled: published remindInMs after this insert, not before (outbox.cancel(id) until then)
    await this.outbox.add(PaymentReminder, { orderId: order.id, customerId }, { delayMs: remindInMs });
    return order; // published right after the commit; a rollback leaves no message
  }
}
