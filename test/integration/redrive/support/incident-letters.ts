import { WireMessage } from 'nest-reliable-messaging/testing';
import { withHeaders } from '../../support/raw-messages';
import { parkedOrder } from './parked-messages';

/** The failure code of the broken handler in the selection suites. */
export const BROKEN_CODE = 'PaymentDeclinedError/402';

/**
 * A dead-letter queue's worth of an incident: `count` orders of `group` parked, the even ones with
 * `BROKEN_CODE`, the odd ones with the fixture's `DOWNSTREAM_DOWN`; and, at `foreignAt`, one with the broken
 * code whose origin is another destination (it cannot be redriven from this DLQ).
 */
export function incidentLetters(
  destination: string,
  group: string,
  count: number,
  foreignAt: number,
): { letters: WireMessage[]; ids: string[]; foreignId: string } {
  const letters: WireMessage[] = [];
  for (let seq = 0; seq < count; seq++) {
    const parked = parkedOrder(destination, group, seq, `customer-${seq}`);
    letters.push(seq % 2 === 0 ? withHeaders(parked, { 'msg.failure-code': BROKEN_CODE }) : parked);
  }
  const foreign = withHeaders(parkedOrder(`${destination}_other`, group, 999, 'customer-x'), {
    'msg.failure-code': BROKEN_CODE,
  });
  letters.splice(foreignAt, 0, { ...foreign, destination: letters[0].destination });
  return { letters, ids: letters.map((l) => l.headers['msg.id']), foreignId: foreign.headers['msg.id'] };
}
