import type { Trend } from '../trends/overview-trends';
import { growingLine, sparkline, trendCell } from './sparkline';

const to = Date.parse('2026-12-07T04:00:00Z');
const from = to - 60 * 60_000;
const trend = (values: number[], growingSince?: number): Trend => ({
  samples: values.map((value, i) => ({ at: to - (values.length - 1 - i) * 30_000, value })),
  from,
  to,
  growingSince,
});

describe(sparkline.name, () => {
  it('draws the readings as an SVG line over the window, the latest as a dot, named for screen readers', () => {
    const svg = sparkline(trend([0, 5, 10]), 'post-create: pending').__html;
    expect(svg).toMatch(/^<svg\s+class="spark"/);
    expect(svg).toContain('role="img"');
    expect(svg).toContain('aria-label="post-create: pending, last 60 min: 0 to 10, now 10"');
    expect(svg).toContain('<title>post-create: pending, last 60 min: 0 to 10, now 10</title>');
    expect(svg).toContain('data-samples="3"');
    // The window's right edge is now: the last reading at x = 94 (96 px less the padding), 30 s is 0.77 px, 10 at the top.
    expect(svg).toContain('points="92.5,18.0 93.2,10.0 94.0,2.0"');
    expect(svg).toContain('<circle cx="94.0" cy="2.0" r="2"');
  });

  it('draws one reading as a dot only, and a flat zero line at the bottom', () => {
    expect(sparkline(trend([3]), 'x').__html).not.toContain('<polyline');
    expect(sparkline(trend([0, 0]), 'x').__html).toContain('points="93.2,18.0 94.0,18.0"');
  });

  it('escapes what a service named (labels come from its metrics)', () => {
    const svg = sparkline(trend([1, 2]), 'd"><script>alert(1)</script>').__html;
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('aria-label="d&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;, last 60 min');
  });
});

describe(growingLine.name, () => {
  it('says since when a series grows, HH:MM in UTC, the full time in its title', () => {
    const line = growingLine(trend([1, 2, 3], Date.parse('2026-12-07T03:12:30Z')));
    expect(line && line.__html).toContain('growing since <time datetime="2026-12-07T03:12:30.000Z"');
    expect(line && line.__html).toContain('>03:12 UTC</time>');
    expect(growingLine(trend([3, 2, 1]))).toBe('');
  });
});

describe(trendCell.name, () => {
  it('captions each series, leaves out one without readings, and says "growing" only where it is trouble', () => {
    const growing = trend([1, 2, 3], to - 60_000);
    const cell = trendCell('svc d', [
      { caption: 'pending', trend: growing },
      { caption: 'published / min', trend: growing, growthIsTrouble: false },
      { caption: 'oldest', trend: undefined },
    ]).__html;
    expect(cell).toContain('<small>pending</small>');
    expect(cell).toContain('aria-label="svc d: published / min, last 60 min');
    expect(cell).not.toContain('<small>oldest</small>');
    expect(cell.match(/growing since/g)).toHaveLength(1);
  });
});
