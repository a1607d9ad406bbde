import { blocks, checkClaims, GuaranteeDocument, parseLedger } from './claims';

const LEDGER = [
  '# Ledger',
  '',
  'Now (2 entries): PROVEN 1, PARTIAL 0, MEASURED 0, NOT TESTED HERE 0, UNPROVEN 1, CONTRADICTED 0.',
  '',
  '### C-1 · Nothing lost',
  '',
  '- **Claim**: nothing is lost.',
  '- **Made in**: docs/guarantees.md (Nothing lost)',
  '- **Holds under**: PG and MDB.',
  '- **Status**: PROVEN',
  '- **Tests**:',
  '  - `test/a.test.ts` › keeps every row',
  '  - `test/b.test.ts` › `publishes ${N} rows once`',
  '',
  '### C-2 · Fast',
  '',
  '- **Claim**: fast.',
  '- **Made in**: docs/other.md',
  '- **Status**: UNPROVEN',
  '',
].join('\n');

const TEST_A = [
  "describe('x', () => {",
  '  // claim: C-1',
  "  it('keeps every row', async () => {});",
  '});',
].join('\n');
const TEST_B = [
  '  // claim: C-7, C-1',
  '  it(',
  '    `publishes ${N} rows once`,',
  '    async () => {},',
  '  );',
].join('\n');
const GUARANTEES = [
  '# Guarantees',
  '',
  '- **Nothing lost**: a row stays until confirmed.',
  '  <!-- claim: C-1 -->',
  '',
  'Links: [retries](r.md). <!-- claim: none -->',
  '',
  '```ts',
  'code is no promise',
  '```',
].join('\n');

const DOCUMENTS: GuaranteeDocument[] = [{ file: 'docs/guarantees.md', everyBlock: true }];

function check(files: Record<string, string | undefined>): string[] {
  const all: Record<string, string | undefined> = {
    'docs/claims.md': LEDGER,
    'test/a.test.ts': TEST_A,
    'test/b.test.ts': TEST_B,
    'docs/guarantees.md': GUARANTEES,
    ...files,
  };
  return checkClaims('docs/claims.md', { read: (file) => all[file] }, DOCUMENTS);
}

describe('the claims ledger check', () => {
  it('passes a ledger whose tests exist and carry their ids, and whose guarantees are all listed', () => {
    expect(check({})).toEqual([]);
  });

  it('reads entries, their status and tests (a template title without its backticks)', () => {
    const { entries, problems } = parseLedger(LEDGER);
    expect(problems).toEqual([]);
    expect(entries.map((e) => [e.id, e.status, e.tests.map((t) => t.title)])).toEqual([
      ['C-1', 'PROVEN', ['keeps every row', 'publishes ${N} rows once']],
      ['C-2', 'UNPROVEN', []],
    ]);
  });

  it('fails on a test file that does not exist', () => {
    expect(check({ 'test/b.test.ts': undefined })).toEqual([
      expect.stringContaining('C-1 names test/b.test.ts, which does not exist'),
    ]);
  });

  it('fails on a test title the file does not have', () => {
    expect(check({ 'test/a.test.ts': TEST_A.replace('keeps every row', 'keeps most rows') })).toEqual([
      expect.stringContaining('names a test "keeps every row" that test/a.test.ts does not have'),
    ]);
  });

  it('fails on a named test that does not carry the claim id, or carries it too far above', () => {
    expect(check({ 'test/a.test.ts': TEST_A.replace('// claim: C-1', '// claim: C-3') })).toEqual([
      expect.stringContaining('does not carry "// claim: C-1"'),
    ]);
    const far = TEST_A.replace('  // claim: C-1\n', '  // claim: C-1\n\n\n\n\n');
    expect(check({ 'test/a.test.ts': far })).toEqual([expect.stringContaining('does not carry')]);
  });

  it('fails on a guarantee with no entry: an unmarked paragraph, and a marker naming an unlisted id', () => {
    const unmarked = `${GUARANTEES}\n\n- **Order per key**: in order.\n`;
    expect(check({ 'docs/guarantees.md': unmarked })).toEqual([
      expect.stringContaining('docs/guarantees.md:12: a guarantee without an entry'),
    ]);
    const unlisted = GUARANTEES.replace('<!-- claim: C-1 -->', '<!-- claim: C-1, C-9 -->');
    expect(check({ 'docs/guarantees.md': unlisted })).toEqual([
      expect.stringContaining('the marker names C-9, which docs/claims.md does not list'),
    ]);
  });

  it('fails on an entry made in a guarantee document that has no marker for it', () => {
    const noMarker = GUARANTEES.replace('<!-- claim: C-1 -->', '<!-- claim: none -->');
    expect(check({ 'docs/guarantees.md': noMarker })).toEqual([
      expect.stringContaining('C-1 is made in docs/guarantees.md, which has no <!-- claim: C-1 --> marker'),
    ]);
  });

  it('fails on an unknown status, a PROVEN entry without tests, a PARTIAL one without where, and stale counts', () => {
    const bad = LEDGER.replace('- **Status**: UNPROVEN', '- **Status**: MOSTLY').concat(
      '### C-3 · Proven by nothing\n\n- **Made in**: x.md\n- **Status**: PROVEN\n\n',
      '### C-4 · Somewhere\n\n- **Made in**: x.md\n- **Status**: PARTIAL\n- **Tests**:\n',
      '  - `test/a.test.ts` › keeps every row\n',
    );
    const problems = check({ 'docs/claims.md': bad });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('C-2 has status "MOSTLY"'),
        expect.stringContaining('C-3 is PROVEN but names no test'),
        expect.stringContaining('C-4 is PARTIAL but does not say where it holds'),
        expect.stringContaining('the counts should read "Now (4 entries): PROVEN 2, PARTIAL 1'),
      ]),
    );
  });

  it('checks a MEASURED figure against the committed bench run it names', () => {
    const measured = LEDGER.replace(
      '- **Status**: UNPROVEN',
      ['- **Status**: MEASURED', '- **Bench**: `bench/results/run.json` › p99 at 200/s'].join('\n'),
    ).replace(
      'PROVEN 1, PARTIAL 0, MEASURED 0, NOT TESTED HERE 0, UNPROVEN 1',
      'PROVEN 1, PARTIAL 0, MEASURED 1, NOT TESTED HERE 0, UNPROVEN 0',
    );
    const run = (figures: string[], machine: unknown = { cores: 2 }) =>
      JSON.stringify({ machine, figures: figures.map((name) => ({ name })) });
    expect(check({ 'docs/claims.md': measured, 'bench/results/run.json': run(['p99 at 200/s']) })).toEqual(
      [],
    );
    expect(check({ 'docs/claims.md': measured, 'bench/results/run.json': run(['p99 at 100/s']) })).toEqual([
      expect.stringContaining('C-2 names a figure "p99 at 200/s" that bench/results/run.json does not have'),
    ]);
    expect(
      check({ 'docs/claims.md': measured, 'bench/results/run.json': run(['p99 at 200/s'], null) }),
    ).toEqual([expect.stringContaining('bench/results/run.json does not record its machine')]);
    expect(check({ 'docs/claims.md': measured })).toEqual([
      expect.stringContaining('C-2 names bench/results/run.json, which is not a committed bench run'),
    ]);
    const unnamed = measured.replace(/- \*\*Bench\*\*:.*\n/, '');
    expect(check({ 'docs/claims.md': unnamed })).toEqual([
      expect.stringContaining('C-2 is MEASURED but names no bench figure (Bench)'),
    ]);
  });

  it('splits a document into paragraphs and list items, leaving out code, headings and tables', () => {
    const text = '# H\n\npara one\ngoes on\n- item a\n  more a\n1. item b\n\n| a | b |\n\n```\ncode\n```\n';
    expect(blocks(text)).toEqual([
      { text: 'para one\ngoes on', line: 3 },
      { text: '- item a\n  more a', line: 5 },
      { text: '1. item b', line: 7 },
    ]);
  });
});
