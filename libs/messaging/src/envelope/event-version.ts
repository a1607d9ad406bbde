import { MessageHeaders } from './message-headers';

/** The highest event version a definition may declare (and a `msg.event-version` header may carry). */
export const MAX_EVENT_VERSION = 1_000_000;

/** True for a valid event version: a whole number from 1 to `MAX_EVENT_VERSION`. */
export function isEventVersion(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_EVENT_VERSION;
}

/**
 * The version a `msg.event-version` header names: 1 when absent, undefined when it is not a valid version
 * (digits only, no sign, no leading zero: what a producer writes, and nothing a hostile one could stretch).
 */
export function eventVersionOf(header: string | undefined): number | undefined {
  if (header === undefined) return 1;
  if (!/^[1-9]\d{0,6}$/.test(header)) return undefined;
  const version = Number(header);
  return isEventVersion(version) ? version : undefined;
}

/**
 * The header that says a message's event version, for a message the library writes: `msg.event-version` when
 * the version is above 1, none for version 1 (its absence means 1, so unversioned events keep their wire).
 */
export function eventVersionHeader(version: number | undefined): Record<string, string> {
  return isEventVersion(version) && version > 1 ? { [MessageHeaders.EVENT_VERSION]: String(version) } : {};
}
