import { MessageEnvelope } from '../envelope/message-envelope';
import { TransactionScope } from '../transaction/transaction-scope';

/**
 * What happened to a delivery in the inbox: handled now; a duplicate of one handled before (same id, same
 * payload); or a different message reusing a handled message's id (CONFLICT: not handled).
 */
export type InboxOutcome = 'HANDLED' | 'DUPLICATE' | 'CONFLICT';

/** A delivery as the inbox sees it. */
export interface InboxDelivery {
  readonly group: string;
  readonly envelope: MessageEnvelope;
  readonly body: Buffer;
  /** `msg.redrive-id` of a redriven copy, else empty: a redriven message counts its attempts afresh. */
  readonly redriveId: string;
  /** With tenants on: the tenant whose database holds its inbox record and takes its handler's writes. */
  readonly tenant?: string;
}

/** A handler's work for one delivery, told how many deliveries of the message failed in place before. */
export type InboxWork = (scope: TransactionScope, failedBefore: number) => Promise<void>;
