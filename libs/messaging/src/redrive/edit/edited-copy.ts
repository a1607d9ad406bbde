import { WireMessage } from '../../envelope/wire-message';
import { fingerprintOf } from '../dead-letter-record';
import { redriveCopy } from '../redrive-headers';
import { applyHeaderChanges } from './edit-headers';
import { PlanEdit } from './message-edit';

/**
 * The edited copy an edit publishes: the redriven copy of the dead letter (its id, type, trace, real key,
 * a new redrive id, no failure headers: `redriveCopy`) with the edited payload, the header changes, and
 * `msg.edit-of` naming the original by its fingerprint.
 */
export function editedCopy(
  parked: WireMessage,
  edit: PlanEdit,
  to: Parameters<typeof redriveCopy>[1],
  redriveId: string,
): WireMessage {
  const copy = redriveCopy(parked, to, redriveId);
  return {
    ...copy,
    headers: applyHeaderChanges(copy.headers, edit.headers, fingerprintOf(parked)),
    body: Buffer.from(edit.payload, 'utf8'),
  };
}
