import { payloadFileName, payloadSection, prettyPayload } from './payload-views';

const context = { base: '/console', user: { name: 'alice', roles: ['operator' as const] }, csrfToken: 't' };

describe(prettyPayload.name, () => {
  it('pretty-prints a whole JSON object or array, two spaces', () => {
    const text = '{"postId":7,"title":"<b>hi</b>","tags":["a"]}';
    expect(prettyPayload({ text, bytes: text.length, truncated: false })).toEqual({
      text: '{\n  "postId": 7,\n  "title": "<b>hi</b>",\n  "tags": [\n    "a"\n  ]\n}',
      json: true,
    });
  });

  it('leaves text that is not JSON, a bare JSON value, and a cut payload as they are', () => {
    for (const [text, truncated] of [
      ['plain text', false],
      ['42', false],
      ['{"cut": "somewh', true],
    ] as const) {
      expect(prettyPayload({ text, bytes: 1_000, truncated })).toEqual({ text, json: false });
    }
  });
});

describe(payloadFileName.name, () => {
  it('names the file after the message id, with nothing a header or a path could misread', () => {
    expect(payloadFileName('0190a1b2-0000-7000-8000-000000000001', true)).toBe(
      '0190a1b2-0000-7000-8000-000000000001.json',
    );
    expect(payloadFileName('../../etc/"passwd"\r\n', false)).toBe('.._.._etc__passwd___.txt');
    expect(payloadFileName(null, false)).toBe('message.txt');
  });
});

describe(payloadSection.name, () => {
  // claim: C-80
  it('escapes the payload, offers copy (for the script) and download', () => {
    const text = '{"title":"</pre><script>alert(1)</script>"}';
    const section = payloadSection(
      context,
      { text, bytes: text.length, truncated: false },
      '/console/x/payload?at=q0',
    ).__html;
    expect(section).not.toContain('<script>');
    expect(section).toContain('&lt;/pre&gt;&lt;script&gt;');
    expect(section).toContain('data-copy="payload-text"');
    expect(section).toContain('href="/console/x/payload?at=q0" download');
  });

  it('says a role may not read payloads, and offers nothing', () => {
    const section = payloadSection(context, undefined, '/console/x/payload?at=q0').__html;
    expect(section).toContain('payload-hidden');
    expect(section).not.toContain('download');
  });
});
