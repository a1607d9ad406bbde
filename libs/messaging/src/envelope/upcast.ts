import { EventDefinition } from './event-definition';

/** A payload brought to the definition's version, or why it could not be. */
export type UpcastResult =
  | { readonly ok: true; readonly payload: unknown }
  /** The message's version is newer than the definition's: a newer producer. */
  | { readonly ok: false; readonly problem: 'VERSION_TOO_NEW' }
  /** Older than the oldest version the definition's upcasters take. */
  | { readonly ok: false; readonly problem: 'VERSION_TOO_OLD' }
  /** The upcaster from version `from` threw (or returned a promise: upcasters are synchronous). */
  | { readonly ok: false; readonly problem: 'UPCAST_FAILED'; readonly from: number; readonly error: unknown };

/** The version a definition takes: its `version`, 1 when it has none. */
export function versionOf(event: Pick<EventDefinition, 'version'>): number {
  return event.version ?? 1;
}

/** The oldest version a definition takes: its lowest upcaster's, else its own. */
export function oldestVersionOf(event: Pick<EventDefinition, 'version' | 'upcasters'>): number {
  const froms = Object.keys(event.upcasters ?? {}).map(Number);
  return froms.length === 0 ? versionOf(event) : Math.min(...froms);
}

/**
 * Brings a payload of version `from` to the definition's version through its upcasters, one version at a
 * time. The result is not validated here: the caller runs the schema on it.
 */
export function upcastPayload(
  event: Pick<EventDefinition, 'version' | 'upcasters'>,
  payload: unknown,
  from: number,
): UpcastResult {
  const version = versionOf(event);
  if (from > version) return { ok: false, problem: 'VERSION_TOO_NEW' };
  if (from < oldestVersionOf(event)) return { ok: false, problem: 'VERSION_TOO_OLD' };
  let current = payload;
  for (let at = from; at < version; at++) {
    const upcaster = event.upcasters?.[at] as ((payload: unknown) => unknown) | undefined;
    if (upcaster === undefined) return { ok: false, problem: 'VERSION_TOO_OLD' }; // defineEvent forbids gaps
    try {
      current = upcaster(current);
    } catch (error) {
      return { ok: false, problem: 'UPCAST_FAILED', from: at, error };
    }
    if (isThenable(current)) {
      (current as PromiseLike<unknown>).then(undefined, () => undefined); // never an unhandled rejection
      const error = new TypeError(
        `the upcaster from version ${at} returned a promise; upcasters are synchronous`,
      );
      return { ok: false, problem: 'UPCAST_FAILED', from: at, error };
    }
  }
  return { ok: true, payload: current };
}

function isThenable(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}
