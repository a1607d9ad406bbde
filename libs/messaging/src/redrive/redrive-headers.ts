import { MessageHeaders } from '../envelope/message-headers';
import { carriedHeaders } from '../failure/carried-headers';
import { FAILURE_HEADER_NAMES } from '../failure/failure-copy';
import { WireMessage } from '../envelope/wire-message';

/**
 * Headers a redrive writes. `msg.redrive-id` names the latest redrive (never the message id); the count
 * and the history of earlier ids travel with the message, through later dead-letterings too, so that a
 * message going round DLQ → redrive → DLQ shows up in the next plan.
 */
export const RedriveHeaders = {
  REDRIVE_ID: MessageHeaders.REDRIVE_ID,
  /** How many times the message was redriven. */
  REDRIVE_COUNT: MessageHeaders.REDRIVE_COUNT,
  /** Earlier redrive ids, oldest first, comma-separated, at most `HISTORY_SIZE - 1`. */
  REDRIVE_HISTORY: MessageHeaders.REDRIVE_HISTORY,
  /** The consumer group the redrive is for: the other groups of the destination skip the message. */
  REDRIVE_GROUP: MessageHeaders.REDRIVE_GROUP,
} as const;

const HISTORY_SIZE = 10;

/** The ids of the redrives a message went through, oldest first (the latest is `msg.redrive-id`). */
export function redriveIdsOf(headers: Readonly<Record<string, string>>): string[] {
  const history = (headers[RedriveHeaders.REDRIVE_HISTORY] ?? '').split(',').filter(Boolean);
  const latest = headers[RedriveHeaders.REDRIVE_ID];
  return (latest ? [...history, latest] : history).slice(-HISTORY_SIZE);
}

/** How many times a message was redriven. */
export function redriveCountOf(headers: Readonly<Record<string, string>>): number {
  const count = Number.parseInt(headers[RedriveHeaders.REDRIVE_COUNT] ?? '', 10);
  const known = redriveIdsOf(headers).length;
  return Number.isFinite(count) && count >= known ? count : known;
}

/**
 * The message a redrive publishes: the dead-letter copy's body and message id under its real key (restored
 * by the caller), with a new redrive id and the group it is for (the only group that handles it again).
 * Its headers pass the dead-letter allowlist again (the library's own, `LIBRARY_CARRIED_HEADERS`, and the
 * deployment's `carryHeaders`): whatever else a writer of the DLQ put on a record (or the broker, `x-*`)
 * does not reach the source with the admin's authority. Never the failure headers (a redriven message starts
 * its attempts afresh) or the sealed key.
 */
export function redriveCopy(
  parked: WireMessage,
  to: {
    readonly target: string;
    readonly group: string;
    readonly key: string | null;
    /** Header names carried besides the library's own, as the services' `deadLetter.carryHeaders`. */
    readonly carryHeaders?: readonly string[];
  },
  redriveId: string,
): WireMessage {
  const headers = carriedHeaders(parked.headers, to.carryHeaders ?? []);
  for (const name of [...FAILURE_HEADER_NAMES, MessageHeaders.SEALED_KEY, RedriveHeaders.REDRIVE_GROUP]) {
    for (const present of Object.keys(headers)) {
      if (present.toLowerCase() === name.toLowerCase()) delete headers[present];
    }
  }
  const earlier = redriveIdsOf(parked.headers).slice(-(HISTORY_SIZE - 1));
  if (earlier.length > 0) headers[RedriveHeaders.REDRIVE_HISTORY] = earlier.join(',');
  else delete headers[RedriveHeaders.REDRIVE_HISTORY];
  headers[RedriveHeaders.REDRIVE_COUNT] = String(redriveCountOf(parked.headers) + 1);
  headers[RedriveHeaders.REDRIVE_ID] = redriveId;
  headers[RedriveHeaders.REDRIVE_GROUP] = to.group;
  return { destination: to.target, key: to.key, headers, body: parked.body };
}
