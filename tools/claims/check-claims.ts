/**
 * `tsx tools/claims/check-claims.ts` (in `npm run lint`): the claims ledger `docs/claims.md` against the tests
 * it names and the guarantee documents (rules in ./claims.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { checkClaims, GuaranteeDocument } from './claims';

const ROOT = path.resolve(__dirname, '..', '..');

/** Where promises are made that the ledger must cover: every block of chapter 2, the README's marked ones. */
export const GUARANTEE_DOCUMENTS: readonly GuaranteeDocument[] = [
  { file: 'docs/guide/02-guarantees.md', everyBlock: true },
  { file: 'README.md', everyBlock: false },
];

function main(): number {
  const problems = checkClaims(
    'docs/claims.md',
    {
      read: (file) => {
        const full = path.join(ROOT, file);
        return existsSync(full) ? readFileSync(full, 'utf8') : undefined;
      },
    },
    GUARANTEE_DOCUMENTS,
  );
  for (const problem of problems) console.error(problem);
  if (problems.length > 0)
    console.error(`claims: ${problems.length} problem(s) in the ledger (docs/claims.md)`);
  return problems.length > 0 ? 1 : 0;
}

if (require.main === module) process.exitCode = main();
