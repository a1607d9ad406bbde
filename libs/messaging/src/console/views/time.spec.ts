import { CONSOLE_JS } from './console-script';
import { relativeAge, timeOf } from './time';

const MIN = 60_000;

describe(relativeAge.name, () => {
  const now = Date.parse('2026-12-03T07:36:43.000Z');

  it.each([
    [0, 'just now'],
    [4_999, 'just now'],
    [5_000, '5 s ago'],
    [59_999, '59 s ago'],
    [4 * MIN, '4 min ago'],
    [4 * MIN + 59_000, '4 min ago'],
    [59 * MIN, '59 min ago'],
    [3 * 60 * MIN + 5 * MIN, '3 h ago'],
    [2 * 24 * 60 * MIN + 1, '2 d ago'],
    [-2 * MIN, 'in 2 min'],
    [-90 * MIN, 'in 1 h'],
  ])('%i ms before now reads "%s"', (before, words) => {
    expect(relativeAge(now - before, now)).toBe(words);
  });

  it('is the very function the console’s script runs in the browser', () => {
    const source = /var relativeAge = ([\s\S]*?);\n {2}function pad/.exec(CONSOLE_JS)?.[1];
    expect(source).toBeDefined();
    // The script's own text, evaluated as the browser does.
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    const make = new Function(`return (${source});`) as () => typeof relativeAge;
    const inBrowser = make();
    for (const before of [0, 7_000, 4 * MIN, 5 * 60 * MIN, 3 * 24 * 60 * MIN, -3 * MIN]) {
      expect(inBrowser(now - before, now)).toBe(relativeAge(now - before, now));
    }
  });
});

describe(timeOf.name, () => {
  it('renders a <time> in UTC with its datetime, and its age when asked', () => {
    const at = new Date('2026-12-03T07:32:43.120Z');
    expect((timeOf(at) as { __html: string }).__html).toBe(
      '<time datetime="2026-12-03T07:32:43.120Z" title="2026-12-03T07:32:43.120Z" data-console-time>2026-12-03 07:32:43 UTC</time>',
    );
    const aged = timeOf('2026-12-03T07:32:43.120Z', Date.parse('2026-12-03T07:36:43.120Z'));
    expect(typeof aged === 'string' ? aged : aged.__html).toContain(
      '2026-12-03 07:32:43 UTC (4 min ago)</time>',
    );
  });

  it('renders nothing for no time, and text that is not a time as it is (escaped by the page)', () => {
    expect(timeOf(null)).toBe('');
    expect(timeOf(undefined)).toBe('');
    expect(timeOf('not a time')).toBe('not a time');
  });
});
