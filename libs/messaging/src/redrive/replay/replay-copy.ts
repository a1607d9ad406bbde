import { MessageHeaders } from '../../envelope/message-headers';
import { WireMessage } from '../../envelope/wire-message';
import { FAILURE_HEADER_NAMES } from '../../failure/failure-copy';
import { isRedriveForAnotherGroup } from '../../failure/redrive-target-group';
import { ReplayInboxMode } from './replay-plan';

/** Set on every replayed copy: the id of the replay (its plan's `replayId`). */
export const REPLAY_ID_HEADER = 'msg.replay-id';

/** Why a record of the window is not replayed. */
export type ReplaySkipReason = 'OTHER_GROUP' | 'NO_MESSAGE_ID';

/** Where a replayed copy goes, for which group, with which inbox mode, under which replay id. */
export interface ReplayCopyTarget {
  readonly target: string;
  readonly group: string;
  readonly inbox: ReplayInboxMode;
  readonly replayId: string;
}

/**
 * The copy a replay publishes of a record of the window, or why it publishes none. It goes to the group the
 * way a redrive goes (`msg.redrive-group`: the topic's other groups skip it), under the record's key, with
 * its body and headers (never failure headers or a sealed key: a record of the topic has none):
 * - `skip`: `msg.redrive-id` is the record's own, or empty when it had none. The inbox key (group, message
 *   id, redrive id) is then the one the group recorded when it handled the record, and the inbox drops the
 *   copy as a duplicate; the empty value still marks it as meant for one group only.
 * - `reprocess`: `msg.redrive-id` is the replay id: a key the inbox has not seen, applied once per replay.
 * A record that is a redrive's copy for another group is not the group's to replay (it skipped it); one
 * without a message id cannot be told apart by the inbox and is not replayed either.
 */
export function replayCopy(
  record: WireMessage,
  to: ReplayCopyTarget,
): { readonly copy: WireMessage } | { readonly skipped: ReplaySkipReason } {
  if (isRedriveForAnotherGroup(record.headers, to.group)) return { skipped: 'OTHER_GROUP' };
  if (!record.headers[MessageHeaders.ID]) return { skipped: 'NO_MESSAGE_ID' };
  const headers: Record<string, string> = { ...record.headers };
  for (const name of [...FAILURE_HEADER_NAMES, MessageHeaders.SEALED_KEY]) {
    for (const present of Object.keys(headers)) {
      if (present.toLowerCase() === name.toLowerCase()) delete headers[present];
    }
  }
  headers[MessageHeaders.REDRIVE_ID] =
    to.inbox === 'reprocess' ? to.replayId : (record.headers[MessageHeaders.REDRIVE_ID] ?? '');
  headers[MessageHeaders.REDRIVE_GROUP] = to.group;
  headers[REPLAY_ID_HEADER] = to.replayId;
  return { copy: { destination: to.target, key: record.key, headers, body: record.body } };
}
