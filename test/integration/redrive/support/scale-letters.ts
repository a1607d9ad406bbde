import { WireMessage } from 'nest-reliable-messaging/testing';
import { withHeaders } from '../../support/raw-messages';
import { BROKEN_CODE } from './incident-letters';
import { parkedOrder } from './parked-messages';

/**
 * An incident at scale: `group` orders parked with `BROKEN_CODE` and, after every `every`-th of them, one
 * with the fixture's `DOWNSTREAM_DOWN` (not in the group); at `foreignAt`, one with the broken code whose
 * origin is another destination (skipped: it cannot be redriven from this DLQ).
 */
export function scaleLetters(
  destination: string,
  group: number,
  every: number,
  foreignAt: number,
): { letters: WireMessage[]; groupIds: string[]; otherIds: string[] } {
  const letters: WireMessage[] = [];
  const groupIds: string[] = [];
  const otherIds: string[] = [];
  for (let seq = 0; groupIds.length < group; seq++) {
    const parked = parkedOrder(destination, 'billing', seq, `customer-${seq}`);
    if (seq % (every + 1) === every) {
      letters.push(parked);
      otherIds.push(parked.headers['msg.id']);
    } else {
      letters.push(withHeaders(parked, { 'msg.failure-code': BROKEN_CODE }));
      groupIds.push(parked.headers['msg.id']);
    }
  }
  const foreign = withHeaders(parkedOrder(`${destination}_other`, 'billing', 999_999, 'customer-x'), {
    'msg.failure-code': BROKEN_CODE,
  });
  letters.splice(foreignAt, 0, { ...foreign, destination: letters[0].destination });
  return { letters, groupIds, otherIds };
}
