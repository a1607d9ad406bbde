import { NewOutboxRow } from '../outbox-row';

/** jsonb's largest value, bytes: the outbox table's payload column (and so parking) refuses more. */
export const JSONB_MAX_BYTES = 0x0fff_ffff;

/** A JSON `\u0000` escape (after an even number of backslashes: not an escaped backslash followed by `u0000`). */
const NUL_ESCAPE = /(^|[^\\])(\\\\)*\\u0000/;

/**
 * What the outbox table would refuse of a message, checked when `OutboxService.add()` writes into the log
 * (`relay.mode: 'logical'`), where no insert checks it: the relay must be able to park any message it reads.
 * Poll mode's insert refuses the same inside the writer's transaction. Returns one line per problem (never
 * the payload's values); empty: the message can be parked.
 */
export function unparkableContent(
  row: Pick<NewOutboxRow, 'payloadJson' | 'headers'>,
  maxBytes = JSONB_MAX_BYTES,
): string[] {
  const problems: string[] = [];
  if (NUL_ESCAPE.test(row.payloadJson))
    problems.push("(payload): contains the character U+0000, which PostgreSQL's jsonb refuses");
  const bytes = Buffer.byteLength(row.payloadJson, 'utf8');
  if (bytes > maxBytes)
    problems.push(`(payload): ${bytes} bytes of JSON, over jsonb's limit of ${maxBytes} bytes`);
  for (const [name, value] of Object.entries(row.headers)) {
    if (typeof value !== 'string') problems.push(`header '${name}': a ${typeof value}, not a string`);
    else if (value.includes('\u0000') || name.includes('\u0000'))
      problems.push(`header '${name.split('\u0000').join('\\u0000')}': contains the character U+0000`);
  }
  return problems;
}
