import { WireMessage } from '../../envelope/wire-message';
import { headerDiff, payloadDiff, wholePayloadDiff } from './edit-diff';
import { EditChange } from './message-edit';

type Json = Parameters<typeof payloadDiff>[0];

/** JSON text parsed, or undefined when it is not JSON. */
export function parseJson(text: string): { readonly value: Json } | undefined {
  try {
    return { value: JSON.parse(text) as Json };
  } catch {
    return undefined;
  }
}

/**
 * The diff an edit makes of `original`: its payload (parsed; a body that is not JSON is replaced whole)
 * against `payload`, then the header changes. Planning writes it into the plan; execution computes it again
 * from the message read and refuses a plan whose diff is not this one.
 */
export function editDiffOf(
  original: WireMessage,
  payload: Json,
  headerChanges: Readonly<Record<string, string | null>>,
): EditChange[] {
  const text = original.body.toString('utf8');
  const before = parseJson(text);
  const changes = before ? payloadDiff(before.value, payload) : wholePayloadDiff(text, payload);
  return [...changes, ...headerDiff(original.headers, headerChanges)];
}
