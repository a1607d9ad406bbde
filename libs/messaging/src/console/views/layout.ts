import { ConsoleUser } from '../console-options.interface';
import { Html, html } from './html';

/** What every page of a signed-in user gets: where the console is, who is signed in, the CSRF token. */
export interface PageContext {
  /** The console's base path, e.g. `/console`. */
  readonly base: string;
  readonly user?: ConsoleUser;
  readonly csrfToken?: string;
  /** How often a page that refreshes itself does, seconds; 0 or absent: never. */
  readonly refreshSeconds?: number;
}

/** What a page does besides showing its body. */
export interface PageOptions {
  /** The page refreshes itself (`context.refreshSeconds`), unless a form on it is in use. */
  readonly refresh?: boolean;
}

const NAV = [
  ['', 'Overview'],
  ['/dead-letters', 'Dead letters'],
  ['/redrive', 'Redrive'],
  ['/audit', 'Audit log'],
] as const;

/** A whole page: header with navigation and sign-out, then `body`. */
export function page(
  context: PageContext,
  title: string,
  body: Html,
  current = '',
  options: PageOptions = {},
): string {
  const { base, user } = context;
  const refresh = options.refresh && user && context.refreshSeconds ? context.refreshSeconds : undefined;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Messaging console</title>
        <link rel="stylesheet" href="${base}/assets/console.css" />
        <script src="${base}/assets/console.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <span class="brand">Messaging console</span>
          ${
            user
              ? html`<nav aria-label="Console">
                    <ul>
                      ${NAV.map(
                        ([path, label]) =>
                          html`<li>
                            <a href="${base}${path}" ${current === path ? html` aria-current="page"` : ''}
                              >${label}</a
                            >
                          </li>`,
                      )}
                    </ul>
                  </nav>
                  <form method="post" action="${base}/logout" class="signout">
                    ${csrfField(context)}
                    <span class="who"
                      >${user.name} <small>(${user.roles.join(', ') || 'no role'})</small></span
                    >
                    <button type="submit">Sign out</button>
                  </form>`
              : ''
          }
        </header>
        <main id="main" ${refresh ? html`data-refresh="${refresh}"` : ''}>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html> `.__html;
}

/** The hidden CSRF field every form of a signed-in user carries. */
export function csrfField(context: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${context.csrfToken ?? ''}" />`;
}

/** A notice: `error` for refusals, `ok` for outcomes. */
export function notice(kind: 'error' | 'ok', text: string | Html): Html {
  return html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;
}

/** A table's header row: each column's label, `#` in front for a numeric (right-aligned) one. */
export function headRow(columns: readonly string[]): Html {
  return html`<thead>
    <tr>
      ${columns.map((c) => (c.startsWith('#') ? html`<th scope="col" class="num">${c.slice(1)}</th>` : html`<th scope="col">${c}</th>`))}
    </tr>
  </thead>`;
}
