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
 * returns once the plan's page is shown again.
 */
export async function pressOnPlan(page: Page, url: string, button: string): Promise<void> {
  await page.goto(url);
  await Promise.all([page.waitForURL(url), page.getByRole('button', { name: button }).click()]);
}
