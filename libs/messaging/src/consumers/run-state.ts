import { MessageEnvelope } from '../envelope/message-envelope';
import { InboxDelivery, InboxOutcome } from '../inbox/inbox.service';
import { Delivery, DeliveryControl, Settlement } from '../transports/delivery-contract';
import { HandlerDefinition } from './handler-registry';

/** A delivery ready for its handler, and what its tries learnt so far. */
export interface RunState {
  readonly group: string;
  readonly delivery: Delivery;
  readonly control: DeliveryControl;
  readonly envelope: MessageEnvelope;
  readonly handler: HandlerDefinition;
  readonly payload: unknown;
  readonly inboxDelivery: InboxDelivery;
  readonly labels: { readonly group: string; readonly destination: string };
  attempt: number;
  failedInPlace: boolean;
  /** A commit of this delivery failed already (it went again once: the inbox told whether it held). */
  commitLost: boolean;
  /**
   * Tries of this delivery whose transaction's connection broke while its handler ran (each waited for the
   * database and spent no attempt); past `MAX_CONNECTION_LOSSES` the next is the handler's failure.
   */
  connectionLosses: number;
  /** The after-commit callbacks its current try registered. */
  tryCallbacks: Array<() => void>;
  /** Callbacks of tries whose commit failed: run if a later try finds it committed (DUPLICATE). */
  readonly unconfirmed: Array<() => void>;
}

/** A delivery of a batch ready for its handler, and its place in the batch. */
export interface ReadyDelivery {
  readonly index: number;
  readonly state: RunState;
}

/**
 * How many times in a row a delivery's transaction may lose its connection while its handler runs and wait
 * for the database without spending an attempt. A handler that breaks its own connection every time (held
 * past `idle_in_transaction_session_timeout`, a statement that ends its session) fails like any other after.
 */
export const MAX_CONNECTION_LOSSES = 5;

/**
 * How one try of deliveries in one transaction ended: committed, failed at the delivery number `at`
 * (rolled back), lost (`atCommit`: the commit failed, its outcome perhaps unknown; else recording them in
 * the inbox failed), unreachable: the transaction could not begin (the database away; no handler ran), or
 * broken at the delivery number `at`: its handler failed and the rollback found the transaction's connection
 * broken (the database went away under it, and the server rolled the transaction back). Neither of the last
 * two is the messages' failure.
 */
export type Tried =
  | { readonly kind: 'COMMITTED'; readonly outcomes: InboxOutcome[] }
  | { readonly kind: 'FAILED'; readonly at: number; readonly error: unknown }
  | { readonly kind: 'LOST'; readonly atCommit: boolean; readonly error: unknown }
  | { readonly kind: 'UNREACHABLE'; readonly error: unknown }
  | { readonly kind: 'BROKEN'; readonly at: number; readonly error: unknown };

/**
 * Settles deliveries one after another into `settled`; stops at one not settled (PAUSE, LEAVE): false then.
 */
export async function settleInOrder(
  deliveries: readonly ReadyDelivery[],
  settled: Map<number, Settlement>,
  settle: (delivery: ReadyDelivery, i: number) => Promise<Settlement>,
): Promise<boolean> {
  for (const [i, delivery] of deliveries.entries()) {
    const settlement = await settle(delivery, i);
    settled.set(delivery.index, settlement);
    if (!continues(settlement)) return false;
  }
  return true;
}

/** True when the deliveries after this settlement go on (it is not a PAUSE or a LEAVE). */
export function continues(settlement: Settlement): boolean {
  return settlement.kind !== 'PAUSE' && settlement.kind !== 'LEAVE';
}
