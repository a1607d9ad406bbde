import { createHash } from 'node:crypto';
import { MessageHeaders } from '../../envelope/message-headers';
import { WireMessage } from '../../envelope/wire-message';
import { FAILURE_HEADER_NAMES } from '../../failure/failure-copy';
import { isRedriveForAnotherGroup } from '../../failure/redrive-target-group';
import { ReplayInboxMode } from './replay-plan';

/** Set on every replayed copy: the id of the replay (its plan's `replayId`). */
export const REPLAY_ID_HEADER = 'msg.replay-id';

/** Set on a copy replayed with `reprocess`: the message id of the record it copies. */
export const REPLAY_OF_HEADER = 'msg.replay-of';

/**
 * The message id a `reprocess` copy carries: a UUID (version 8) derived from the replay id and the record's
 * message id. The inbox keys on (group, message id), so the copy is a message it has not seen, and the same
 * one each time the replay runs: applied once per replay, never twice.
 */
export function replayMessageId(replayId: string, messageId: string): string {
  const bytes = createHash('sha256')
    .update(`nest-reliable-messaging/replay:${replayId}:${messageId}`, 'utf8')
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8: custom
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // variant 10
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

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
 * - `reprocess`: the message id is `replayMessageId(replayId, id)` (the record's own in `msg.replay-of`), a
 *   key the inbox has not seen and the same whenever the replay runs: applied once per replay; `msg.redrive-id`
 *   is the replay id (its attempts count afresh).
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
  if (to.inbox === 'reprocess') {
    // A copy an earlier replay made names its original: both map to one id, applied once in this replay.
    const original = record.headers[REPLAY_OF_HEADER] || record.headers[MessageHeaders.ID];
    headers[MessageHeaders.ID] = replayMessageId(to.replayId, original);
    headers[REPLAY_OF_HEADER] = original;
    headers[MessageHeaders.REDRIVE_ID] = to.replayId;
  } else {
    headers[MessageHeaders.REDRIVE_ID] = record.headers[MessageHeaders.REDRIVE_ID] ?? '';
  }
  headers[MessageHeaders.REDRIVE_GROUP] = to.group;
  headers[REPLAY_ID_HEADER] = to.replayId;
  return { copy: { destination: to.target, key: record.key, headers, body: record.body } };
}
