import { Browser, chromium } from 'playwright-core';

/** Debian's `chromium` package (`.ci/run` installs it when missing). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Headless Chromium for the browser suites: Debian's build driven by playwright-core (no browser download),
 * quiet (no background networking, updates, sync). Each launch gets a fresh profile: playwright-core
 * passes `--user-data-dir` with a new temporary folder itself (and refuses the flag among `args`), and
 * each browser context is a fresh cookie jar, one per signed-in user.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
