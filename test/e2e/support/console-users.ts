import { Browser, BrowserContext, Page } from 'playwright-core';
import { DEMO_CONSOLE_USERS } from '../../../tools/demo/ops-console';

/** The name of one of the demo console's users (alice, bob, olga, victor). */
export type ConsoleUserName = (typeof DEMO_CONSOLE_USERS)[number]['name'];

/** How the users' browser contexts are made. */
export interface ConsoleUsersOptions {
  /** The suite's browser (launched in its `beforeAll`). */
  readonly browser: () => Browser;
  /** The console's base URL, e.g. `http://127.0.0.1:4567/console`. */
  readonly base: () => string;
  readonly viewport: { readonly width: number; readonly height: number };
  /** The zone the browser shows times in. Default: the machine's. */
  readonly timezoneId?: string;
}

/**
 * The demo console's users in the browser suites: each in a browser context of their own (a cookie jar),
 * signed in through the sign-in form on their first page.
 */
export class ConsoleUsers {
  private contexts = new Map<ConsoleUserName, BrowserContext>();

  constructor(private readonly options: ConsoleUsersOptions) {}

  /** A new page of `name`'s own browser context, signed in. */
  async page(name: ConsoleUserName): Promise<Page> {
    let context = this.contexts.get(name);
    if (!context) {
      const { browser, base, viewport, timezoneId } = this.options;
      context = await browser().newContext({ viewport, ...(timezoneId ? { timezoneId } : {}) });
      // A step that acts on the broker (a Kafka redrive reads the DLQ with a consumer group of its own) can
      // take longer than Playwright's 30 s on a loaded machine; the suite's own timeout still bounds it.
      context.setDefaultTimeout(90_000);
      this.contexts.set(name, context);
      const page = await context.newPage();
      await page.goto(base());
      await expect(page.getByRole('heading', { name: 'Sign in' }).count()).resolves.toBe(1);
      const user = DEMO_CONSOLE_USERS.find((u) => u.name === name)!;
      await page.getByLabel('User name').fill(user.name);
      await page.getByLabel('Password').fill(user.password);
      await Promise.all([page.waitForURL(base()), page.getByRole('button', { name: 'Sign in' }).click()]);
      await page.close();
    }
    return context.newPage();
  }

  /** Closes every user's context (after a console restart, say): each signs in again on their next page. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.contexts.values()].map((context) => context.close()));
    this.contexts = new Map();
  }
}

/** The CSRF token of the page's session (every signed-in page's sign-out form carries it). */
export const csrfOf = (page: Page): Promise<string> =>
  page.locator('input[name="_csrf"]').first().inputValue();

/** The depth of `dlq` on the console's dead-letter queues page. */
export async function dlqDepthOf(page: Page, base: string, dlq: string): Promise<number> {
  await page.goto(`${base}/dead-letters`);
  const row = page.getByRole('row', { name: new RegExp(dlq.replace(/\./g, '\\.')) });
  return Number(await row.getByRole('cell').nth(1).innerText());
}
