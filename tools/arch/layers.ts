/**
 * `npm run lint:layers` (in `npm run lint`): the library's imports point down. Each top-level folder or file
 * of `libs/messaging/src` stands in one layer (below, bottom first; docs/architecture.md draws them); an
 * import from one of them to another in a higher layer is refused, and so is a loop between folders of one
 * layer. Specs are not checked (a spec may reach up to build what it tests).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const SOURCES = path.join(ROOT, 'libs', 'messaging', 'src');

/** The layers, bottom first: a room may import rooms of its own layer or of a lower one. */
export const LAYERS: readonly (readonly string[])[] = [
  ['messaging.constants.ts', 'messaging.tokens.ts', 'errors/', 'tables/', 'topology/', 'migrations/'],
  ['envelope/', 'common/', 'retry/', 'transaction/', 'messaging-options.interface.ts'],
  ['transports/', 'messaging.module-definition.ts'],
  ['failure/', 'options/'],
  ['inbox/', 'observability/', 'create-transport.ts'],
  ['outbox/', 'consumers/'],
  // Admin beside the stores: the runtime (outbox, consumers and below) never imports the redrive.
  ['database/', 'redrive/', 'admin/', 'console/', 'tenants/', 'messaging-lifecycle.ts', 'microservices.ts'],
  ['cli/', 'messaging-core.module.ts', 'redrive.ts', 'console.ts'],
  ['messaging.module.ts', 'testing.ts', 'index.ts'],
];

/** An import between two rooms (a top-level folder as `name/`, or a top-level file). */
export interface RoomImport {
  readonly from: string;
  readonly to: string;
  /** The importing file and the file it imports, from `libs/messaging/src`. */
  readonly files: readonly string[];
}

/** The room of a file under the sources: its top-level folder (`outbox/`) or itself (`index.ts`). */
export function roomOf(file: string): string {
  const [first, ...rest] = file.split('/');
  return rest.length > 0 ? `${first}/` : first;
}

/** What is wrong with `imports` under `layers`: imports that point up, and loops inside a layer. */
export function layerViolations(
  imports: readonly RoomImport[],
  layers: readonly (readonly string[])[] = LAYERS,
): string[] {
  const layerOf = new Map(layers.flatMap((rooms, layer) => rooms.map((room) => [room, layer] as const)));
  const problems: string[] = [];
  for (const room of new Set(imports.flatMap((i) => [i.from, i.to]))) {
    if (!layerOf.has(room))
      problems.push(`${room} stands in no layer: add it to LAYERS (tools/arch/layers.ts)`);
  }
  const sideways = new Map<string, Set<string>>();
  for (const { from, to, files } of imports) {
    const [a, b] = [layerOf.get(from), layerOf.get(to)];
    if (a === undefined || b === undefined) continue;
    if (b > a)
      problems.push(`${from} (layer ${a}) imports ${to} (layer ${b}), which stands above it: ${files[0]}`);
    if (a === b) sideways.set(from, (sideways.get(from) ?? new Set()).add(to));
  }
  for (const [from, tos] of sideways) {
    for (const to of tos) {
      if (sideways.get(to)?.has(from) && from < to) problems.push(`${from} and ${to} import each other`);
    }
  }
  return problems;
}

/** The imports between rooms of the library's sources (specs left out). */
export function roomImports(sources: string = SOURCES): RoomImport[] {
  const byPair = new Map<string, { from: string; to: string; files: string[] }>();
  for (const file of sourceFiles(sources)) {
    const text = readFileSync(path.join(sources, file), 'utf8');
    // Static imports and re-exports, and the require() that loads an optional peer's module lazily.
    for (const [, specifier] of text.matchAll(/(?:(?:import|export)\s[^;]*?from\s+|require\()'(\.[^']+)'/g)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
      if (target.startsWith('..')) continue; // outside the sources
      const isFolder = !target.includes('/') && existsSync(path.join(sources, target));
      const [from, to] = [
        roomOf(file),
        roomOf(target.includes('/') || isFolder ? `${target}/` : `${target}.ts`),
      ];
      if (from === to) continue;
      const pair = byPair.get(`${from} ${to}`) ?? { from, to, files: [] };
      pair.files.push(`${file} -> ${target}`);
      byPair.set(`${from} ${to}`, pair);
    }
  }
  return [...byPair.values()];
}

function sourceFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return sourceFiles(path.join(dir, entry.name), relative);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [relative] : [];
  });
}

if (require.main === module) {
  const problems = layerViolations(roomImports());
  for (const problem of problems) console.error(problem);
  process.exit(problems.length > 0 ? 1 : 0);
}
