import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IdempotentHandler, RetryMode, RetryPolicy } from 'nest-reliable-messaging';
import type { EventPayload, MessageContext } from 'nest-reliable-messaging';
import { Repository } from 'typeorm';
import { Invoice } from './invoice.entity.js';
import { OrderPlaced } from './order-placed.event.js';
import { ReceiptSender } from './receipt-sender.js';

@Injectable()
export class BillingHandler {
  private readonly logger = new Logger(BillingHandler.name);

  constructor(
    @InjectRepository(Invoice) private readonly invoices: Repository<Invoice>,
    private readonly receipts: ReceiptSender,
  ) {}

  @IdempotentHandler(OrderPlaced, { group: 'billing' }) // once per message, however often it is delivered
  @RetryPolicy({ maxAttempts: 3, mode: RetryMode.INLINE, backoff: { initialDelayMs: 200 } })
  async onOrderPlaced(event: EventPayload<typeof OrderPlaced>, context: MessageContext): Promise<void> {
    // Commits with the inbox record; if anything below throws, it rolls back and the policy retries.
    await this.invoices.save({ orderId: event.orderId, amount: event.total });
    await this.receipts.send(event.customerId, event.orderId);
    this.logger.log(
      `Order ${event.orderId} billed (message ${context.messageId}, attempt ${context.attempt})`,
    );
  }
}
