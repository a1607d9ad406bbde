import { MessageHeaders } from '../envelope/message-headers';
import { DeadLetterRecord, describeRecord } from './dead-letter-record';
import { PlannedMessage } from './redrive-plan';
import { shownHeaders } from './shown-headers';

/** A parked message as an admin may inspect it: what a plan shows, and its headers. */
export interface InspectedDeadLetter {
  /** What a plan shows of it (reserved headers only). */
  readonly message: PlannedMessage;
  /** `msg.first-failure-at`: when its first delivery failed, ISO 8601 (null when absent). */
  readonly firstFailureAt: string | null;
  /**
   * Its headers, as parked (the key is a pseudonym; the sealed key is left out), at most
   * `HeaderDisplayLimits` of them: long names and values cut and marked, the library's own first.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** How many headers were left out (too many, or too large together); absent when none. */
  readonly headersNotShown?: number;
}

/** The start of a parked message's body, as `inspectMessage()` reads it. */
export interface DeadLetterPayload {
  /** The first `maxBytes` of the body as UTF-8 text: show it only to people allowed to read payloads. */
  readonly text: string;
  /** The body's whole size, bytes. */
  readonly bytes: number;
  /** True when `text` is only the start of the body. */
  readonly truncated: boolean;
}

/** One parked message with the start of its payload. */
export interface InspectedDeadLetterWithPayload extends InspectedDeadLetter {
  /** The start of its body. */
  readonly payload: DeadLetterPayload;
}

/** What an admin may see of a parked message: what a plan shows, its failure time, its headers. */
export function inspected(record: DeadLetterRecord): InspectedDeadLetter {
  const { [MessageHeaders.SEALED_KEY]: _sealed, ...all } = record.wire.headers;
  const { headers, notShown } = shownHeaders(all);
  return {
    message: describeRecord(record),
    firstFailureAt: all[MessageHeaders.FIRST_FAILURE_AT] ?? null,
    headers,
    ...(notShown > 0 ? { headersNotShown: notShown } : {}),
  };
}

/** The first `maxBytes` of a body as text, its size, and whether that was all of it. */
export function payloadOf(body: Buffer, maxBytes: number): DeadLetterPayload {
  const truncated = body.length > maxBytes;
  const text = body.subarray(0, maxBytes).toString('utf8');
  // A character cut in two at the limit would show as a replacement character: leave it out.
  return { text: truncated ? text.replace(/\uFFFD$/, '') : text, bytes: body.length, truncated };
}
