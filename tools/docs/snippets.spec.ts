import { withSnippets } from './snippets';

describe('snippets', () => {
  describe(withSnippets.name, () => {
    it('replaces each marked block with its file, fenced by its extension', () => {
      const document = 'a\n<!-- snippet: x/y.ts -->\n```ts\nold\n```\n<!-- /snippet -->\nb\n';
      expect(withSnippets(document, () => 'new\n\n')).toBe(
        'a\n<!-- snippet: x/y.ts -->\n\n```ts\nnew\n```\n\n<!-- /snippet -->\nb\n',
      );
    });

    it('leaves text without markers alone', () => {
      expect(withSnippets('```ts\ncode\n```\n', () => 'other')).toBe('```ts\ncode\n```\n');
    });
  });
});
