import { Injectable, Logger } from '@nestjs/common';
import { IdempotentHandler } from 'nest-reliable-messaging';
import type { EventPayload, MessageContext } from 'nest-reliable-messaging';
import { PaymentReminder } from './payment-reminder.event.js';

@Injectable()
export class ReminderHandler {
  private readonly logger = new Logger(ReminderHandler.name);

  @IdempotentHandler(PaymentReminder, { group: 'billing' }) // delivered when due, not before
  async onPaymentReminder(
    event: EventPayload<typeof PaymentReminder>,
    context: MessageContext,
  ): Promise<void> {
    this.logger.log(
      `Order ${event.orderId}: payment reminder for customer ${event.customerId} (${context.messageId})`,
    );
  }
}
