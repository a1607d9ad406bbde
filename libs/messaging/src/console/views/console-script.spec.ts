import { runInNewContext } from 'node:vm';
import { CONSOLE_JS } from './console-script';

/** The console's script in a page of the least DOM it touches: an overview whose `<main>` refreshes every second. */
function page() {
  const attributes = new Map<string, string>([['data-refresh', '1']]);
  const main = {
    innerHTML: '',
    getAttribute: (name: string) => attributes.get(name) ?? null,
    setAttribute: (name: string, value: string) => void attributes.set(name, value),
    querySelectorAll: () => [],
  };
  const ticks: Array<() => void> = [];
  const answers: Array<(text: string) => void> = [];
  let fetches = 0;
  const document = {
    readyState: 'complete',
    hidden: false,
    activeElement: null,
    querySelector: (selector: string) => (selector === 'main[data-refresh]' ? main : null),
    querySelectorAll: () => [],
  };
  runInNewContext(CONSOLE_JS, {
    document,
    location: { href: 'http://console/' },
    setInterval: (tick: () => void) => ticks.push(tick),
    fetch: () => {
      fetches += 1;
      return new Promise((resolve) => {
        answers.push((text) =>
          resolve({ ok: true, redirected: false, url: 'http://console/', text: async () => text }),
        );
      });
    },
    DOMParser: class {
      parseFromString() {
        return { querySelector: () => ({ innerHTML: '<p>fresh</p>' }) };
      }
    },
    Intl,
    Date,
  });
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    main,
    refreshed: () => attributes.get('data-refreshed'),
    fetches: () => fetches,
    /** One period passes: the refresh timer fires (the first timer; the second localises every 30 s). */
    tick: () => ticks[0](),
    answer: async () => {
      answers.shift()?.('<main></main>');
      await settle();
      await settle();
    },
  };
}

describe('the console script', () => {
  it('refreshes one at a time: no new request while the last one has not answered', async () => {
    const overview = page();
    overview.tick();
    overview.tick(); // a slow console: the period passes again before it answered
    overview.tick();
    expect(overview.fetches()).toBe(1);
    await overview.answer();
    expect(overview.refreshed()).toBe('1');
    expect(overview.main.innerHTML).toBe('<p>fresh</p>');
    overview.tick();
    expect(overview.fetches()).toBe(2);
    await overview.answer();
    expect(overview.refreshed()).toBe('2');
  });
});
