/**
 * The claims ledger's rules (issue 41), as pure functions over the texts; `check-claims.ts` runs them in
 * `npm run lint`. The ledger is `docs/claims.md`: one `### C-n · title` section per promise, with its status
 * and the tests that prove it (`` - `file` › title ``). What is checked:
 * - each entry has a status of the six classes; PROVEN and PARTIAL entries name at least one test, and a
 *   PARTIAL or NOT TESTED HERE entry says where it holds or why not; a MEASURED entry (a figure) names the
 *   committed bench run and the figure in it (`` - **Bench**: `bench/results/….json` › figure name ``), and
 *   the run has the figure and records its machine;
 * - each test named exists (the file, and the title in it), and carries the entry's id in a `claim:` comment
 *   on its title's line or one of the four lines above it;
 * - each paragraph and list item of a guarantee document (docs/guide/02-guarantees.md) carries a
 *   `<!-- claim: … -->` marker; every id a marker names (there, or in the README) has an entry, and every entry
 *   made in one of those documents has its marker there;
 * - the ledger's "Now" counts are the counts of its entries.
 */

export const STATUSES = [
  'PROVEN',
  'PARTIAL',
  'MEASURED',
  'NOT TESTED HERE',
  'UNPROVEN',
  'CONTRADICTED',
] as const;
export type Status = (typeof STATUSES)[number];

export interface TestRef {
  readonly file: string;
  readonly title: string;
  /** 1-based line in the ledger. */
  readonly line: number;
}

export interface LedgerEntry {
  readonly id: string;
  readonly line: number;
  readonly status?: Status;
  readonly madeIn: string;
  readonly holdsUnder: string;
  readonly gap: string;
  readonly tests: readonly TestRef[];
  /** The committed bench figures a MEASURED entry rests on. */
  readonly bench: readonly TestRef[];
}

/** A document whose promises the ledger must cover. */
export interface GuaranteeDocument {
  readonly file: string;
  /** Every paragraph and list item must carry a marker (true), or only the markers it has are checked. */
  readonly everyBlock: boolean;
}

/** What the checker reads: the repository's files, by path from its root. */
export interface Sources {
  read(file: string): string | undefined;
}

const HEADING = /^### (C-\d+) · \S/;
const FIELD = /^- \*\*([A-Za-z ]+)\*\*: ?(.*)$/;
const TEST = /^ {2}- `([^`]+)` › (.+)$/;
const MARKER = /<!-- claim: ([^>]*?) -->/g;
const CLAIM_COMMENT = /claim:\s*([A-Z]-\d+(?:[\s,]+[A-Z]-\d+)*)/g;
const LINES_ABOVE = 4;

/** The entries of the ledger, and what is malformed in it. */
export function parseLedger(text: string): { entries: LedgerEntry[]; problems: string[] } {
  const entries: LedgerEntry[] = [];
  const problems: string[] = [];
  const lines = text.split('\n');
  let current: { -readonly [K in keyof LedgerEntry]: LedgerEntry[K] } | undefined;
  let tests: TestRef[] = [];
  let bench: TestRef[] = [];
  let inTests = false;
  let lastField = '';
  const finish = () => {
    if (current) entries.push({ ...current, tests, bench });
    current = undefined;
    tests = [];
    bench = [];
    inTests = false;
  };
  lines.forEach((text, index) => {
    const line = index + 1;
    if (text.startsWith('#')) {
      finish();
      const heading = HEADING.exec(text);
      if (heading)
        current = { id: heading[1], line, madeIn: '', holdsUnder: '', gap: '', tests: [], bench: [] };
      else if (text.startsWith('### '))
        problems.push(`docs/claims.md:${line}: an entry heading is "### C-n · title"`);
      return;
    }
    if (!current) return;
    const field = FIELD.exec(text);
    if (field) {
      inTests = field[1] === 'Tests';
      lastField = field[1];
      const value = field[2].trim();
      if (field[1] === 'Status') {
        if ((STATUSES as readonly string[]).includes(value)) current.status = value as Status;
        else
          problems.push(
            `docs/claims.md:${line}: ${current.id} has status "${value}", not one of ${STATUSES.join(', ')}`,
          );
      } else if (field[1] === 'Made in') current.madeIn = value;
      else if (field[1] === 'Holds under') current.holdsUnder = value;
      else if (field[1] === 'Gap') current.gap = value;
      else if (field[1] === 'Bench') {
        const figure = /^`([^`]+)` › (.+)$/.exec(value);
        if (figure) bench.push({ file: figure[1], title: unquote(figure[2].trim()), line });
        else
          problems.push(`docs/claims.md:${line}: a Bench field is "\`bench/results/….json\` › figure name"`);
      }
      return;
    }
    const test = TEST.exec(text);
    if (test && inTests) {
      tests.push({ file: test[1], title: unquote(test[2].trim()), line });
      return;
    }
    // A field's text goes on over indented lines.
    if (/^ {2}\S/.test(text) && !inTests) {
      if (lastField === 'Made in') current.madeIn += ` ${text.trim()}`;
      else if (lastField === 'Holds under') current.holdsUnder += ` ${text.trim()}`;
      else if (lastField === 'Gap') current.gap += ` ${text.trim()}`;
    }
  });
  finish();
  return { entries, problems };
}

function unquote(title: string): string {
  return title.length > 1 && title.startsWith('`') && title.endsWith('`') ? title.slice(1, -1) : title;
}

/** The ids of the `claim:` comments on the title's line and the lines above it, for each place the title is. */
export function idsNearTitle(source: string, title: string): string[][] | undefined {
  const lines = source.split('\n');
  const places: string[][] = [];
  lines.forEach((text, index) => {
    if (!text.includes(title)) return;
    const window = lines.slice(Math.max(0, index - LINES_ABOVE), index + 1).join('\n');
    const ids: string[] = [];
    for (const match of window.matchAll(CLAIM_COMMENT)) ids.push(...match[1].split(/[\s,]+/).filter(Boolean));
    places.push(ids);
  });
  return places.length > 0 ? places : undefined;
}

/** The ids each marker of a document names, with its line. */
export function markers(document: string): { id: string; line: number }[] {
  const found: { id: string; line: number }[] = [];
  document.split('\n').forEach((text, index) => {
    for (const match of text.matchAll(MARKER)) {
      for (const id of match[1].split(/[\s,]+/).filter(Boolean)) found.push({ id, line: index + 1 });
    }
  });
  return found;
}

/**
 * The paragraphs and list items of a Markdown document (outside code fences, headings and tables), each with
 * its first line: where a promise would be written.
 */
export function blocks(document: string): { text: string; line: number }[] {
  const found: { text: string; line: number }[] = [];
  let fenced = false;
  let current: { text: string; line: number } | undefined;
  const close = () => {
    if (current) found.push(current);
    current = undefined;
  };
  document.split('\n').forEach((text, index) => {
    if (/^\s*```/.test(text)) {
      close();
      fenced = !fenced;
      return;
    }
    if (fenced || text.trim() === '' || text.startsWith('#') || text.startsWith('|')) {
      close();
      return;
    }
    if (/^(- |\* |\d+\. )/.test(text)) close();
    if (current) current.text += `\n${text}`;
    else current = { text, line: index + 1 };
  });
  close();
  return found;
}

/** A committed bench run has the figure a MEASURED entry names, and records the machine it ran on. */
function checkBenchFigure(
  id: string,
  figure: TestRef,
  sources: Sources,
  at: (line: number) => string,
): string[] {
  const text = sources.read(figure.file);
  if (text === undefined || !figure.file.startsWith('bench/results/'))
    return [`${at(figure.line)}: ${id} names ${figure.file}, which is not a committed bench run`];
  let run: { machine?: unknown; figures?: Array<{ name?: unknown }> };
  try {
    run = JSON.parse(text) as typeof run;
  } catch {
    return [`${at(figure.line)}: ${id} names ${figure.file}, which is not JSON`];
  }
  const problems: string[] = [];
  if (!run.machine) problems.push(`${at(figure.line)}: ${figure.file} does not record its machine`);
  if (!(run.figures ?? []).some((f) => f.name === figure.title))
    problems.push(
      `${at(figure.line)}: ${id} names a figure "${figure.title}" that ${figure.file} does not have`,
    );
  return problems;
}

export function countByStatus(entries: readonly LedgerEntry[]): Record<Status, number> {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
  for (const entry of entries) if (entry.status) counts[entry.status]++;
  return counts;
}

/** Every problem of the ledger against the repository; none when it holds. */
export function checkClaims(
  ledgerFile: string,
  sources: Sources,
  documents: readonly GuaranteeDocument[],
): string[] {
  const ledger = sources.read(ledgerFile);
  if (ledger === undefined) return [`${ledgerFile} is missing`];
  const { entries, problems } = parseLedger(ledger);
  const at = (line: number) => `${ledgerFile}:${line}`;
  const ids = new Set<string>();

  for (const entry of entries) {
    if (ids.has(entry.id)) problems.push(`${at(entry.line)}: ${entry.id} is listed twice`);
    ids.add(entry.id);
    if (!entry.status) problems.push(`${at(entry.line)}: ${entry.id} has no status`);
    if (!entry.madeIn) problems.push(`${at(entry.line)}: ${entry.id} does not say where the promise is made`);
    if ((entry.status === 'PROVEN' || entry.status === 'PARTIAL') && entry.tests.length === 0) {
      problems.push(`${at(entry.line)}: ${entry.id} is ${entry.status} but names no test`);
    }
    if (entry.status === 'PARTIAL' && !entry.holdsUnder) {
      problems.push(
        `${at(entry.line)}: ${entry.id} is PARTIAL but does not say where it holds (Holds under)`,
      );
    }
    if (entry.status === 'MEASURED' && entry.bench.length === 0) {
      problems.push(`${at(entry.line)}: ${entry.id} is MEASURED but names no bench figure (Bench)`);
    }
    for (const figure of entry.bench) problems.push(...checkBenchFigure(entry.id, figure, sources, at));
    if (entry.status === 'NOT TESTED HERE' && !entry.gap) {
      problems.push(`${at(entry.line)}: ${entry.id} is NOT TESTED HERE but gives no reason (Gap)`);
    }
    for (const test of entry.tests) {
      const source = sources.read(test.file);
      if (source === undefined) {
        problems.push(`${at(test.line)}: ${entry.id} names ${test.file}, which does not exist`);
        continue;
      }
      const places = idsNearTitle(source, test.title);
      if (!places) {
        problems.push(
          `${at(test.line)}: ${entry.id} names a test "${test.title}" that ${test.file} does not have`,
        );
      } else if (!places.some((found) => found.includes(entry.id))) {
        problems.push(
          `${at(test.line)}: the test "${test.title}" in ${test.file} does not carry "// claim: ${entry.id}" ` +
            `(on its title's line or the ${LINES_ABOVE} above)`,
        );
      }
    }
  }

  for (const document of documents) {
    const text = sources.read(document.file);
    if (text === undefined) {
      problems.push(`${document.file} is missing`);
      continue;
    }
    const marked = markers(text);
    for (const { id, line } of marked) {
      if (id !== 'none' && !ids.has(id))
        problems.push(`${document.file}:${line}: the marker names ${id}, which ${ledgerFile} does not list`);
    }
    const markedIds = new Set(marked.map((m) => m.id));
    for (const entry of entries) {
      if (entry.madeIn.includes(document.file) && !markedIds.has(entry.id)) {
        problems.push(
          `${at(entry.line)}: ${entry.id} is made in ${document.file}, which has no <!-- claim: ${entry.id} --> marker`,
        );
      }
    }
    if (document.everyBlock) {
      for (const block of blocks(text)) {
        if (!block.text.includes('<!-- claim:')) {
          problems.push(
            `${document.file}:${block.line}: a guarantee without an entry: mark it <!-- claim: C-n --> ` +
              `(or <!-- claim: none --> when it promises nothing)`,
          );
        }
      }
    }
  }

  const now = /^Now \((\d+) entries\): (.*)$/m.exec(ledger);
  const counts = countByStatus(entries);
  const expected = `${STATUSES.map((s) => `${s} ${counts[s]}`).join(', ')}.`;
  if (!now) problems.push(`${ledgerFile}: no "Now (n entries): …" line with the counts`);
  else if (Number(now[1]) !== entries.length || now[2].trim() !== expected) {
    problems.push(`${ledgerFile}: the counts should read "Now (${entries.length} entries): ${expected}"`);
  }
  return problems;
}
