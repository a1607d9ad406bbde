import { defineEvent } from 'nest-reliable-messaging';
import { z } from 'zod';

export const OrderPlaced = defineEvent({
  type: 'OrderPlaced',
  destination: 'orders', // Kafka topic / RabbitMQ exchange
  schema: z.object({ orderId: z.number().int(), customerId: z.number().int(), total: z.string() }),
  key: (event) => event.customerId, // one customer's events stay in order
});
