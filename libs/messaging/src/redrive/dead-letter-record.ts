import { createHash } from 'node:crypto';
import { MessageHeaders } from '../envelope/message-headers';
import { WireMessage } from '../envelope/wire-message';
import { canonicalJson } from './canonical-json';
import { redriveCountOf, redriveIdsOf } from './redrive-headers';
import { MessagePosition, PlannedMessage } from './redrive-plan';

/** A message read from a dead-letter destination without settling it. */
export interface DeadLetterRecord {
  readonly position: MessagePosition;
  /** The parked copy; `destination` is the dead-letter destination. */
  readonly wire: WireMessage;
}

/**
 * Headers a broker writes about a message's deliveries, not about the message: a quorum queue counts every
 * read (`x-delivery-count`, RabbitMQ 4.3's `x-acquired-count`), and broker dead-lettering adds `x-death`.
 */
const DELIVERY_STATE_HEADERS = /^x-(delivery-count|acquired-count|death|first-death-.*|last-death-.*)$/;

/**
 * SHA-256 of what a message is (key, headers, body), leaving out the broker's delivery bookkeeping: tells
 * whether the message at a position is still the one, however often it was read in between.
 */
export function fingerprintOf(wire: WireMessage): string {
  const hash = createHash('sha256');
  const headers = Object.fromEntries(
    Object.entries(wire.headers).filter(([name]) => !DELIVERY_STATE_HEADERS.test(name)),
  );
  hash.update(canonicalJson({ key: wire.key, headers }));
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
