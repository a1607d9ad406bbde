/** The parts of an Express request the console reads (it runs on `@nestjs/platform-express`). */
export interface ConsoleRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body?: Readonly<Record<string, unknown>>;
  readonly query: Readonly<Record<string, unknown>>;
  readonly params: Readonly<Record<string, string>>;
  /** True over HTTPS (behind a proxy: Express's `trust proxy` must be set for it to be true). */
  readonly secure: boolean;
  /** The client's address (behind a proxy: Express's `trust proxy` makes it the client's, not the proxy's). */
  readonly ip?: string;
  /** The connection: the address of this machine it was made to (`localAddress`). */
  readonly socket?: { readonly localAddress?: string };
}

/** The parts of an Express response the console writes. */
export interface ConsoleResponse {
  status(code: number): this;
  setHeader(name: string, value: string | readonly string[]): this;
  getHeader(name: string): unknown;
  send(body: string): this;
  redirect(status: number, url: string): void;
}

/** The cookies of a request, by name (the first of a name wins). */
export function cookiesOf(request: ConsoleRequest): Record<string, string> {
  const cookies: Record<string, string> = {};
  const header = request.headers.cookie;
  for (const part of (Array.isArray(header) ? header.join(';') : (header ?? '')).split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const name = part.slice(0, at).trim();
    if (name && !(name in cookies)) {
      try {
        cookies[name] = decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        // a cookie that is not URI-encoded is not one of ours
      }
    }
  }
  return cookies;
}

/** A `Set-Cookie` value: HttpOnly, SameSite=Strict, limited to the console's path; Secure over HTTPS. */
export function cookie(
  name: string,
  value: string,
  options: { path: string; maxAgeSeconds: number; secure: boolean },
): string {
  const parts = [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${options.path}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
    'HttpOnly',
    'SameSite=Strict',
  ];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** Adds a `Set-Cookie` to those the response already has. */
export function addCookie(response: ConsoleResponse, value: string): void {
  const existing = response.getHeader('Set-Cookie');
  const list = Array.isArray(existing)
    ? (existing as string[])
    : typeof existing === 'string'
      ? [existing]
      : [];
  response.setHeader('Set-Cookie', [...list, value]);
}

/**
 * Sends a page with the console's security headers (no caching, no framing, scripts and styles from the
 * console itself only: no inline script runs, whatever a broker's value tried to inject).
 */
export function sendPage(response: ConsoleResponse, status: number, body: string): void {
  response
    .status(status)
    .setHeader('Content-Type', 'text/html; charset=utf-8')
    .setHeader(
      'Content-Security-Policy',
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    )
    .setHeader('X-Content-Type-Options', 'nosniff')
    .setHeader('Referrer-Policy', 'no-referrer')
    .setHeader('Cache-Control', 'no-store')
    .send(body);
}

/** A query or form field as a trimmed string; undefined when absent, empty or not a string. */
export function field(
  source: Readonly<Record<string, unknown>> | undefined,
  name: string,
): string | undefined {
  const value = source?.[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
