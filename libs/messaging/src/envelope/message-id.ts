import { v7 as uuidv7, validate, version } from 'uuid';

/** A new message id: a UUIDv7 (RFC 9562), unique and sortable by creation time. */
export function newMessageId(): string {
  return uuidv7();
}

/** True for any RFC 9562 UUID; consumers accept ids from other producers too, not only v7. */
export function isMessageId(value: unknown): value is string {
  return typeof value === 'string' && validate(value) && version(value) >= 1;
}
