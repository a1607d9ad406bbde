import { defineEvent } from 'nest-reliable-messaging';
import { z } from 'zod';

export const PaymentReminder = defineEvent({
  type: 'PaymentReminder',
  destination: 'orders', // beside OrderPlaced: the billing group's topic or queue already
  schema: z.object({ orderId: z.number().int(), customerId: z.number().int() }),
  key: (event) => event.customerId,
});
