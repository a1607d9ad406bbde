import { html, Html } from './html';
import { notice, page, PageContext } from './layout';

/** The sign-in form. */
export function loginPage(context: PageContext, loginToken: string, error?: string): string {
  return page(
    context,
    'Sign in',
    html`<div class="login">
      ${error ? notice('error', error) : ''}
      <form method="post" action="${context.base}/login">
        <input type="hidden" name="_csrf" value="${loginToken}" />
        <label for="name"
          >User name<input id="name" name="name" autocomplete="username" required autofocus
        /></label>
        <label for="password"
          >Password<input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
        /></label>
        <button type="submit">Sign in</button>
      </form>
    </div>`,
  );
}

/** A refusal or error page. */
export function messagePage(context: PageContext, title: string, text: string | Html): string {
  return page(
    context,
    title,
    html`${notice('error', text)}
      <p><a href="${context.base}">Back to the overview</a></p>`,
  );
}
