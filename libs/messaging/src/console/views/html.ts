import { printableKeepingLayout } from '../../common/printable';

/**
 * HTML text, already escaped: only `html` and `raw` make one. Unforgeable: the markup sits in a private
 * field, and `render` trusts an instance of this class only, never an object of the same shape (a value
 * read from a database or a broker, e.g. `{"__html": "<form …>"}`, is escaped like any other text).
 */
export class Html {
  readonly #markup: string;

  private constructor(markup: string) {
    this.#markup = markup;
  }

  /** The markup (a value made by `html` or `raw` only). */
  get __html(): string {
    return this.#markup;
  }

  /** True for markup made by `html` or `raw` (a private field: a look-alike object has none). */
  static is(value: unknown): value is Html {
    return typeof value === 'object' && value !== null && #markup in value;
  }

  /** @internal */
  static make(markup: string): Html {
    return new Html(markup);
  }
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
  return Html.make(markup);
}

type Part = Html | string | number | null | undefined | false | readonly Part[];

function render(part: Part, inTag: boolean): string {
  if (part === null || part === undefined || part === false) return '';
  if (Array.isArray(part)) return part.map((p: Part) => render(p, inTag)).join('');
  if (Html.is(part)) return part.__html;
  // Anything else, objects included, is text: escaped.
  const text = typeof part === 'object' ? JSON.stringify(part) : String(part);
  // Between tags the reader sees it: bidi controls, zero-width and other invisible characters become
  // visible `\u{…}` escapes, so `OrderPlaced\u{200b}` or a reversed id cannot pass for what it is not. Inside
  // a tag (an attribute value, sent back by a form) the value stays as it is, escaped only.
  return escapeHtml(inTag ? text : printableKeepingLayout(text));
}

/** True when `markup` ends inside a tag (an attribute value): its last `<` comes after its last `>`. */
function endsInTag(markup: string): boolean {
  return markup.lastIndexOf('<') > markup.lastIndexOf('>');
}

/**
 * A template tag that escapes every interpolated value (unless it is `Html` already). Text between tags
 * also has its invisible and reordering characters made visible (`printableKeepingLayout`).
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0];
  values.forEach((value, i) => (out += render(value, endsInTag(out)) + strings[i + 1]));
  return raw(out);
}
