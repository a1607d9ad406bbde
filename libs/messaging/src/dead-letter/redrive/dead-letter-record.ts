import { createHash } from 'node:crypto';
import { MessageHeaders } from '../../envelope/message-headers';
import { WireMessage } from '../../envelope/wire-message';
import { canonicalJson } from './canonical-json';
import { redriveCountOf, redriveIdsOf } from './redrive-headers';
import { MessagePosition, PlannedMessage } from './redrive-plan';

/** A message read from a dead-letter destination without settling it. */
export interface DeadLetterRecord {
  readonly position: MessagePosition;
  /** The parked copy; `destination` is the dead-letter destination. */
  readonly wire: WireMessage;
}

/** SHA-256 of a message's key, headers and body: tells whether the message at a position is still the one. */
export function fingerprintOf(wire: WireMessage): string {
  const hash = createHash('sha256');
  hash.update(canonicalJson({ key: wire.key, headers: wire.headers }));
  hash.update('\n');
  hash.update(wire.body);
  return `sha256:${hash.digest('hex')}`;
}

/** What a plan shows of a parked message: its reserved headers, never its payload or other headers. */
export function describeRecord(record: DeadLetterRecord): PlannedMessage {
  const h = record.wire.headers;
  const attempts = Number.parseInt(h[MessageHeaders.RETRY_ATTEMPT] ?? '', 10);
  return {
    position: record.position,
    messageId: h[MessageHeaders.ID] ?? null,
    type: h[MessageHeaders.TYPE] ?? null,
    failureCategory: h[MessageHeaders.FAILURE_CATEGORY] ?? null,
    failureCode: h[MessageHeaders.FAILURE_CODE] ?? null,
    attempts: Number.isFinite(attempts) ? attempts : null,
    originDestination: h[MessageHeaders.ORIGIN_DESTINATION] ?? null,
    lastFailureAt: h[MessageHeaders.LAST_FAILURE_AT] ?? null,
    redriveCount: redriveCountOf(h),
    previousRedriveIds: redriveIdsOf(h),
    fingerprint: fingerprintOf(record.wire),
  };
}
