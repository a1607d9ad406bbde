import { canonicalJson } from '../canonical-json';
import { DeadLetterRecord } from '../dead-letter-record';
import { MessageEditRefusedError } from '../errors/message-edit-refused.error';
import { RedrivePlanAlteredError } from '../errors/redrive-plan-altered.error';
import { RedrivePlan } from '../redrive-plan';
import { diffHashOf } from './edit-diff';
import { editDiffOf, parseJson } from './edit-diff-of';
import { lockedHeaderReason } from './edit-headers';

/**
 * What an edit plan must be, checked wherever it is approved or executed (with the hash and the audit
 * log's PLAN entry, `reviewPlan`): an `edit` exactly when the action is `edit`; one message, the edited one;
 * no locked header among its changes; a JSON payload; a diff hash that is its diff's. A plan store or a file
 * holds plans anyone with write access could change: this is input like what a user types.
 */
export function checkEditPlan(plan: RedrivePlan): void {
  const { edit } = plan;
  if (plan.action !== 'edit') {
    if (edit !== undefined) throw altered(plan, 'the plan carries an edit but its action is not edit');
    return;
  }
  if (!edit) throw altered(plan, 'an edit plan without its edit');
  const [message] = plan.messages;
  if (plan.messages.length !== 1 || message.messageId !== edit.messageId) {
    throw altered(plan, 'an edit plan moves exactly the one message it edits');
  }
  const locked = Object.keys(edit.headers)
    .map((name) => lockedHeaderReason(name, [name]))
    .filter((reason): reason is string => reason !== undefined);
  if (locked.length > 0) {
    throw new MessageEditRefusedError(plan.source, edit.messageId, 'LOCKED_HEADER', locked.join('; '));
  }
  if (!parseJson(edit.payload)) {
    throw new MessageEditRefusedError(
      plan.source,
      edit.messageId,
      'NOT_JSON',
      'the edited payload is not JSON',
    );
  }
  if (diffHashOf(edit.messageId, message.fingerprint, edit.diff) !== edit.diffHash) {
    throw altered(plan, "the edit's diff hash is not its diff's");
  }
}

/**
 * Refuses (before anything moves) when the diff the approver signed is not what the edit makes of the
 * message read again: the payload and header changes published are exactly the signed ones.
 */
export function checkEditRead(plan: RedrivePlan, records: readonly DeadLetterRecord[]): void {
  const { edit } = plan;
  if (!edit) return;
  const parsed = parseJson(edit.payload);
  const [record] = records;
  if (!parsed || records.length !== 1) throw altered(plan, 'an edit plan moves exactly one message');
  const diff = editDiffOf(record.wire, parsed.value, edit.headers);
  if (canonicalJson(diff) !== canonicalJson(edit.diff)) {
    throw altered(plan, 'the signed diff is not what the edit makes of the message read');
  }
}

function altered(plan: RedrivePlan, difference: string): RedrivePlanAlteredError {
  return new RedrivePlanAlteredError(plan.source, [difference]);
}
