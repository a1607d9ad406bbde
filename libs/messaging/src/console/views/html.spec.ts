import { html, Html, raw } from './html';

describe('html (issue 45 item 1: markup cannot be forged)', () => {
  it('escapes an object shaped like markup, as read from a database', () => {
    const planted = JSON.parse(
      '{"__html":"<form method=post action=/console/redrive/plans/B/approve>"}',
    ) as unknown as string;
    const out = html`<p>${planted}</p>`.__html;
    expect(out).not.toContain('<form');
    expect(out).toContain('&lt;form');
  });

  it('keeps its own markup, and only its own', () => {
    expect(html`<b>${raw('<i>x</i>')}</b>`.__html).toBe('<b><i>x</i></b>');
    expect(Html.is(raw('x'))).toBe(true);
    expect(Html.is({ __html: 'x' })).toBe(false);
    expect(Html.is(Object.create(Html.prototype))).toBe(false);
  });
});
