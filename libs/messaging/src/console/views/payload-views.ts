import { DeadLetterPayload } from '../../redrive/inspected-dead-letter';
import { html, Html } from './html';
import { PageContext } from './layout';

/** A payload as shown: JSON pretty-printed (two spaces) when it is whole and parses, else as it is. */
export function prettyPayload(payload: DeadLetterPayload): { text: string; json: boolean } {
  if (payload.truncated) return { text: payload.text, json: false };
  try {
    const parsed: unknown = JSON.parse(payload.text);
    if (parsed !== null && typeof parsed === 'object') {
      return { text: JSON.stringify(parsed, null, 2), json: true };
    }
  } catch {
    // not JSON: shown as it is
  }
  return { text: payload.text, json: false };
}

/** A file name for a message's payload download: its id, letters, digits, `.`, `_` and `-` only. */
export function payloadFileName(messageId: string | null, json: boolean): string {
  const stem = (messageId ?? 'message').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) || 'message';
  return `${stem}.${json ? 'json' : 'txt'}`;
}

/**
 * The payload section of a message's page: hidden for a role that may not read payloads; else the payload
 * (pretty-printed when JSON), a Copy button (the console's script shows it: copy needs a script) and a
 * Download link (`downloadHref`, a file with its own audit entry).
 */
export function payloadSection(
  context: PageContext,
  payload: DeadLetterPayload | undefined,
  downloadHref: string,
): Html {
  if (payload === undefined) {
    return html`<p class="muted" data-testid="payload-hidden">Your role may not read payloads.</p>`;
  }
  const shown = prettyPayload(payload);
  return html`<p class="actions">
      <button type="button" class="secondary" data-copy="payload-text" hidden>Copy payload</button>
      <a href="${downloadHref}" download data-testid="payload-download">Download payload</a>
      <span id="payload-text-copied" role="status" class="muted"></span>
    </p>
    <pre
      id="payload-text"
      aria-labelledby="payload"
      data-testid="payload"
      data-json="${shown.json ? 'yes' : 'no'}"
    >
${shown.text}</pre>
    ${payload.truncated ? html`<p class="muted" data-testid="payload-truncated">The first ${payload.text.length === 0 ? 0 : Buffer.byteLength(payload.text)} of ${payload.bytes} bytes; the rest is not shown (the download has all of it).</p>` : ''}`;
}
