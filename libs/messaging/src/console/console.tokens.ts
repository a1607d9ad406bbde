/** The console's base path as links and cookies use it, e.g. `/console`. */
export const MESSAGING_CONSOLE_BASE = Symbol('MESSAGING_CONSOLE_BASE');

/** `path` as a base path: one leading slash, none trailing. */
export function basePath(path: string): string {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  if (trimmed === '' || !/^[A-Za-z0-9._~\-/]+$/.test(trimmed)) {
    throw new Error(
      `MessagingConsoleModule: the path '${path}' must not be empty and may hold letters, digits, '.', '_', '~', '-' and '/' only.`,
    );
  }
  return `/${trimmed}`;
}
