import { v7 as uuidv7, validate, version } from 'uuid';

/** A new message id: a UUIDv7 (RFC 9562), unique and sortable by creation time. */
export function newMessageId(): string {
  return uuidv7();
}

/** True for an RFC 9562 UUID of versions 1 to 8: consumers accept ids from other producers, not only v7. */
export function isMessageId(value: unknown): value is string {
  if (typeof value !== 'string' || !validate(value)) return false;
  const v = version(value);
  return v >= 1 && v <= 8; // not the nil or the max UUID
}
