import { RedriveRefusedError } from './redrive-refused.error';

/**
 * Why an edit of a dead letter was refused:
 * - `LOCKED_HEADER`: it changes a header nobody may change (the library's `msg.*`, the trace context,
 *   `content-type`, a broker's `x-*`) or one the redriven copy would not carry (not in `carryHeaders`);
 * - `NOT_JSON`: the edited payload is not JSON;
 * - `SCHEMA`: the event definition of the message's type refuses the edited payload;
 * - `NO_SCHEMA`: no event definition of the message's type and version is known, and the editor did not
 *   say to plan it unvalidated (`withoutSchema`);
 * - `NO_CHANGE`: the edit changes nothing;
 * - `TOO_LARGE`: the edited payload is above `RedriveLimits.MAX_EDIT_BYTES`.
 */
export type MessageEditRefusal =
  'LOCKED_HEADER' | 'NOT_JSON' | 'SCHEMA' | 'NO_SCHEMA' | 'NO_CHANGE' | 'TOO_LARGE';

/** An edit of a dead letter was refused before anything was planned or moved; `reason` says why. */
export class MessageEditRefusedError extends RedriveRefusedError {
  /** The guard that refused: always `EDIT_REFUSED`. */
  readonly guard = 'EDIT_REFUSED' as const;

  constructor(
    /** The dead-letter destination. */
    readonly source: string,
    /** The edited message's id (null when it has none). */
    readonly messageId: string | null,
    /** Why. */
    readonly reason: MessageEditRefusal,
    /** What exactly: header names, schema issue paths; never payload values. */
    readonly detail: string,
  ) {
    super(`Edit of ${messageId ?? 'a message without id'} in ${source} refused (${reason}): ${detail}.`);
    this.name = 'MessageEditRefusedError';
  }
}
