/** HTML text, already escaped: only `html` and `raw` make one. */
export interface Html {
  readonly __html: string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Trusted markup (the console's own). */
export function raw(markup: string): Html {
  return { __html: markup };
}

type Part = Html | string | number | null | undefined | false | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (Array.isArray(part)) return part.map(render).join('');
  if (typeof part === 'object') return (part as Html).__html;
  return escapeHtml(String(part));
}

/** A template tag that escapes every interpolated value (unless it is `Html` already). */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  values.forEach((value, i) => (out += render(value) + strings[i + 1]));
  return raw(out);
}
