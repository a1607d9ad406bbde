import { Page } from 'playwright-core';

/**
 * Plans a redrive of the first `count` (default 1) messages of `dlq` from its page, as the signed-in user of
 * `page`; the plan's URL.
 */
export async function planFromHead(page: Page, base: string, dlq: string, count = 1): Promise<string> {
  await page.goto(`${base}/dead-letters/${dlq}`);
  await page.getByLabel('Messages from the head (1–100)').fill(String(count));
  await Promise.all([
    page.waitForURL(/\/redrive\/plans\//),
    page.getByRole('button', { name: 'Plan redrive' }).click(),
  ]);
  return page.url();
}

/**
 * Opens the plan at `url` and presses `button` (`Approve this plan`, `Execute redrive`, `Execute discard`);
 * returns once the page the form's answer leads to has loaded (the plan's page again, or a refusal). Not
 * `waitForURL(url)`: the page is at that URL before the click, so it resolved at once, and under load the test
 * read the plan's page from before the POST ("approved" where the console had executed it).
 */
export async function pressOnPlan(page: Page, url: string, button: string): Promise<void> {
  await page.goto(url);
  // The console's pages refresh in place (fetch), never by navigating: the main frame's next navigation is
  // the answer's page; once it committed, the load state is that page's.
  await Promise.all([
    page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame() }),
    page.getByRole('button', { name: button }).click(),
  ]);
  await page.waitForLoadState('domcontentloaded');
}
