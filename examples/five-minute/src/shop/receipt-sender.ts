import { Injectable, Logger } from '@nestjs/common';

/** Stands for a call to another system (e-mail, payments): it can fail, and it is not idempotent. */
@Injectable()
export class ReceiptSender {
  private readonly logger = new Logger(ReceiptSender.name);

  async send(customerId: number, orderId: number): Promise<void> {
    this.logger.log(`Receipt for order ${orderId} sent to customer ${customerId}`);
  }
}
