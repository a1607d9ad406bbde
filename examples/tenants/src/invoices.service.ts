import { Injectable } from '@nestjs/common';
import {
  defineEvent,
  IdempotentHandler,
  MessagingTenants,
  Outbox,
  OutboxService,
} from 'nest-reliable-messaging';
// Types in a decorated signature come in as types (a stock Nest 12 app has isolatedModules).
import type { EventPayload, MessageContext } from 'nest-reliable-messaging';
import { z } from 'zod';
import { Invoice } from './invoice.entity.js';

export const InvoiceIssued = defineEvent({
  type: 'InvoiceIssued',
  destination: 'invoices',
  key: (invoice) => String(invoice.invoiceId),
  schema: z.object({ invoiceId: z.number().int(), customer: z.string() }),
});

@Injectable()
export class InvoicesService {
  constructor(
    private readonly tenants: MessagingTenants,
    private readonly outbox: OutboxService,
  ) {}

  /** In the current tenant's database: the invoice and its message commit together, in that tenant. */
  @Outbox()
  async issue(customer: string): Promise<Invoice> {
    const invoices = this.tenants.dataSource().getRepository(Invoice);
    const invoice = await invoices.save(invoices.create({ customer }));
    await this.outbox.add(InvoiceIssued, { invoiceId: invoice.id, customer });
    return invoice;
  }

  /** Named explicitly (a job, a script): the same, as tenant `tenant`. */
  issueFor(tenant: string, customer: string): Promise<Invoice> {
    return this.tenants.run(tenant, () => this.issue(customer));
  }
}

@Injectable()
export class InvoiceMailer {
  /**
   * Applied in the database of the tenant the message came from (its inbox there, checked by its signature):
   * `context.manager` is that tenant's transaction, `context.tenant` names it.
   */
  @IdempotentHandler(InvoiceIssued, { group: 'invoice-mailer' })
  async onInvoiceIssued(invoice: EventPayload<typeof InvoiceIssued>, context: MessageContext): Promise<void> {
    await context.manager.update(Invoice, invoice.invoiceId, { sent: true });
  }
}
