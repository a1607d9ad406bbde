// The event definitions `nest-messaging dlq edit --events` loads in redrive-edit-cli.test.ts: a compiled
// module as a deployment's contracts would be (the CLI matches them by msg.type and version).
const { z } = require('zod');
const { defineEvent } = require('nest-reliable-messaging');

module.exports = {
  OrderPlaced: defineEvent({
    type: 'OrderPlaced',
    destination: 'orders',
    schema: z.object({
      orderId: z.number().int(),
      customer: z.string().min(1),
      amount: z.number().int().nonnegative(),
      seq: z.number().int().optional(),
    }),
    key: (event) => event.customer,
  }),
};
