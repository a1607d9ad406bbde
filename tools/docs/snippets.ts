/**
 * `npm run docs:snippets` writes, and `-- --check` (in `npm run lint`) verifies, the code blocks of the
 * READMEs and the guide (docs/guide) that come from files: a block between `<!-- snippet: path -->` and `<!-- /snippet -->` is the
 * file at `path` (from the repository root), verbatim (blank lines around the fence, as Prettier writes it). The five-minute example's files are the consumer
 * apps of the compatibility matrix, so the README shows code that is compiled and run on every CI run.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const DOCUMENTS = [
  'README.md',
  'libs/messaging/README.md',
  ...readdirSync(path.join(ROOT, 'docs', 'guide'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/guide/${f}`),
];
const BLOCK = /(<!-- snippet: ([^\s]+) -->\n)[\s\S]*?(<!-- \/snippet -->)/g;

/** The document with every snippet block replaced by its file's current text. */
export function withSnippets(document: string, read: (file: string) => string): string {
  return document.replace(BLOCK, (_all, open: string, file: string, close: string) => {
    const language = path.extname(file).slice(1) || 'text';
    return `${open}\n\`\`\`${language}\n${read(file).trimEnd()}\n\`\`\`\n\n${close}`;
  });
}

function main(check: boolean): number {
  const stale: string[] = [];
  for (const document of DOCUMENTS) {
    const file = path.join(ROOT, document);
    const current = readFileSync(file, 'utf8');
    const updated = withSnippets(current, (snippet) => readFileSync(path.join(ROOT, snippet), 'utf8'));
    if (updated === current) continue;
    if (check) stale.push(document);
    else writeFileSync(file, updated);
  }
  if (stale.length > 0) {
    console.error(`Snippets out of date in ${stale.join(', ')}: run npm run docs:snippets`);
    return 1;
  }
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.includes('--check'));
