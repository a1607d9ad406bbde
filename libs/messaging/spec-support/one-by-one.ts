import { Delivery, DeliveryControl, Settlement } from '../src/transports/delivery-contract';

/**
 * A subscription's `onDeliveries` for specs that answer one delivery at a time: one after another, and LEAVE
 * for the rest after a PAUSE or a LEAVE, or once the consumer stops or loses the lane, as the pipeline does.
 */
export function oneByOne(
  onDelivery: (delivery: Delivery, control: DeliveryControl) => Promise<Settlement>,
): (deliveries: readonly Delivery[], control: DeliveryControl) => Promise<Settlement[]> {
  return async (deliveries, control) => {
    const settlements: Settlement[] = [];
    for (const delivery of deliveries) {
      const last = settlements.at(-1);
      const stop =
        last?.kind === 'PAUSE' || last?.kind === 'LEAVE' || control.isStopping() || control.isHalted?.();
      settlements.push(stop ? { kind: 'LEAVE' } : await onDelivery(delivery, control));
    }
    return settlements;
  };
}
