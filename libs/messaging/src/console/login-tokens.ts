import { createHmac, randomBytes } from 'node:crypto';
import { tokensMatch } from './console-sessions';

/**
 * The sign-in form's CSRF tokens, issued by the server: `<expiry ms>.<nonce>.<HMAC>` under a key of this
 * process's own. A token counts only when the server made it and it has not expired, and the form's field
 * and the browser's cookie carry the same one: a cookie/field pair made up elsewhere does not pass.
 */
export class LoginTokens {
  private readonly key = randomBytes(32);

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** A new token, valid for `ttlMs`. */
  issue(): string {
    const body = `${this.now() + this.ttlMs}.${randomBytes(16).toString('base64url')}`;
    return `${body}.${this.mac(body)}`;
  }

  /** True when `sent` (the form's) and `cookie` are one token this server issued, still valid. */
  accepts(sent: unknown, cookie: string | undefined): boolean {
    if (typeof sent !== 'string' || !tokensMatch(sent, cookie)) return false;
    const at = sent.lastIndexOf('.');
    const body = sent.slice(0, at);
    const expiry = Number(body.split('.')[0]);
    return at > 0 && tokensMatch(sent.slice(at + 1), this.mac(body)) && expiry > this.now();
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
