import { addCookie, ConsoleRequest, ConsoleResponse, cookie, cookiesOf } from './console-http';

const HSTS = 'max-age=31536000';

/**
 * The console's cookies and transport headers. `secure` (the console is served over HTTPS only): every
 * cookie is `Secure` and named `__Host-…`, which makes the browser hold it to path `/` and no domain, and
 * pages send HSTS. Otherwise cookies stay on the console's path and are `Secure` when the request came
 * over HTTPS.
 */
export class ConsoleCookies {
  constructor(
    private readonly base: string,
    private readonly secure: boolean,
  ) {}

  /** The value of the console's cookie `name` in `request`. */
  read(request: ConsoleRequest, name: string): string | undefined {
    return cookiesOf(request)[this.name(name)];
  }

  /** Sets the console's cookie `name` (an empty value and 0 seconds remove it). */
  set(
    response: ConsoleResponse,
    request: ConsoleRequest,
    name: string,
    value: string,
    maxAgeSeconds: number,
  ): void {
    const options = this.secure
      ? { path: '/', maxAgeSeconds, secure: true }
      : { path: this.base, maxAgeSeconds, secure: request.secure };
    addCookie(response, cookie(this.name(name), value, options));
  }

  /** HSTS once the console is said to be served over HTTPS only. */
  securityHeaders(response: ConsoleResponse): void {
    if (this.secure) response.setHeader('Strict-Transport-Security', HSTS);
  }

  private name(cookieName: string): string {
    return this.secure ? `__Host-${cookieName}` : cookieName;
  }
}
