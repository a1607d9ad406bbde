import { createRequire } from 'node:module';
import * as path from 'node:path';
import { EventDefinition } from '../envelope/event-definition';
import { CliUsageError } from './cli-usage.error';
import { CliIo } from './cli-io';

/** True for what `defineEvent()` returns: a type, a destination and a schema that can `safeParse`. */
function isEventDefinition(value: unknown): value is EventDefinition {
  const v = value as Partial<EventDefinition> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.type === 'string' &&
    typeof v.destination === 'string' &&
    typeof (v.schema as { safeParse?: unknown } | undefined)?.safeParse === 'function'
  );
}

/**
 * The event definitions a compiled module exports (`--events dist/contracts/index.js`): every export made
 * by `defineEvent()`, and those in an exported array or object of them. Loading runs the module's code, so
 * name only the services' own reviewed contracts.
 */
export function loadEventDefinitions(io: CliIo, file: string): EventDefinition[] {
  let exported: Record<string, unknown>;
  try {
    exported = createRequire(path.join(io.cwd, 'noop.js'))(path.resolve(io.cwd, file)) as Record<
      string,
      unknown
    >;
  } catch (error) {
    throw new CliUsageError(`--events ${file}: the module does not load (${(error as Error).message})`);
  }
  const found = new Set<EventDefinition>();
  for (const value of Object.values(exported ?? {})) {
    const candidates = Array.isArray(value)
      ? value
      : isEventDefinition(value)
        ? [value]
        : typeof value === 'object' && value !== null
          ? Object.values(value)
          : [];
    for (const candidate of candidates) if (isEventDefinition(candidate)) found.add(candidate);
  }
  if (found.size === 0) throw new CliUsageError(`--events ${file}: the module exports no event definition`);
  return [...found];
}
