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

describe('html (issue 45 finding 13: bidi and zero-width text is shown, not obeyed)', () => {
  it('makes invisible and reordering characters between tags visible escapes', () => {
    const type = 'OrderPlaced\u200b';
    const id = 'abc\u202edcba';
    const out = html`<td>${type}</td>
      <td>${id}</td>
      <td>${'x\u2066y\u00ad\u0007'}</td>`.__html;
    expect(out).toContain('<td>OrderPlaced\\u{200b}</td>');
    expect(out).toContain('<td>abc\\u{202e}dcba</td>');
    expect(out).toContain('<td>x\\u{2066}y\\u{ad}\\u{7}</td>');
    for (const c of ['\u200b', '\u202e', '\u2066', '\u00ad', '\u0007']) expect(out).not.toContain(c);
  });

  it('keeps line feeds and tabs (a payload in a pre), and plain text as it is', () => {
    expect(html`<pre>${'{\n\t"a": 1\n}'}</pre>`.__html).toBe('<pre>{\n\t&quot;a&quot;: 1\n}</pre>');
    expect(html`<p>${'Grüße, 注文 & <b>'}</p>`.__html).toBe('<p>Grüße, 注文 &amp; &lt;b&gt;</p>');
  });

  it('leaves a value inside a tag as it is (a form sends it back), escaped only', () => {
    const out = html`<input type="hidden" name="ids" value="${'m\u200b1'}" /><span>${'m\u200b1'}</span>`
      .__html;
    expect(out).toBe('<input type="hidden" name="ids" value="m\u200b1" /><span>m\\u{200b}1</span>');
  });

  it('escapes nested values by their own place, and objects as text', () => {
    const inner = html`<b title="${'t\u200b'}">${'b\u200b'}</b>`;
    expect(html`<p>${inner} ${{ a: '\u202e' } as unknown as string}</p>`.__html).toBe(
      '<p><b title="t\u200b">b\\u{200b}</b> {&quot;a&quot;:&quot;\\u{202e}&quot;}</p>',
    );
  });
});
