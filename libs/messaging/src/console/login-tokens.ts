import { createHmac, randomBytes } from 'node:crypto';
import { tokensMatch } from './console-sessions';

/** Tokens remembered as used (until they expire); past this, the oldest are refused wholesale (`floor`). */
const MAX_REMEMBERED = 50_000;

/**
 * The sign-in form's CSRF tokens, issued by the server: `<expiry ms>.<nonce>.<HMAC>` under a key of this
 * process's own. A token counts only when the server made it, it has not expired and has not been used, and
 * the form's field and the browser's cookie carry the same one: a cookie/field pair made up elsewhere does
 * not pass, nor one posted a second time (issue 45, finding 9: a guesser replayed one form for 15 minutes).
 */
export class LoginTokens {
  private readonly key = randomBytes(32);
  /** Used tokens' nonces and expiries, oldest first (tokens are issued, so expire, in order). */
  private readonly used = new Map<string, number>();
  /** Tokens expiring at or before this time are refused: the used ones forgotten to stay bounded were among them. */
  private floor = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** A new token, valid for `ttlMs`, once. */
  issue(): string {
    const body = `${this.now() + this.ttlMs}.${randomBytes(16).toString('base64url')}`;
    return `${body}.${this.mac(body)}`;
  }

  /**
   * True when `sent` (the form's) and `cookie` are one token this server issued, still valid and not used
   * before; it is used from now on, whatever the sign-in's outcome.
   */
  consume(sent: unknown, cookie: string | undefined): boolean {
    if (typeof sent !== 'string' || !tokensMatch(sent, cookie)) return false;
    const at = sent.lastIndexOf('.');
    const body = sent.slice(0, at);
    const [expiryText, nonce] = body.split('.');
    const expiry = Number(expiryText);
    const now = this.now();
    if (at <= 0 || !tokensMatch(sent.slice(at + 1), this.mac(body)) || !(expiry > now)) return false;
    this.forgetExpired(now);
    if (expiry <= this.floor || this.used.has(nonce)) return false;
    this.used.set(nonce, expiry);
    if (this.used.size > MAX_REMEMBERED) {
      const [oldest, oldestExpiry] = this.used.entries().next().value as [string, number];
      this.used.delete(oldest);
      this.floor = Math.max(this.floor, oldestExpiry);
    }
    return true;
  }

  private forgetExpired(now: number): void {
    for (const [nonce, expiry] of this.used) {
      if (expiry > now) break;
      this.used.delete(nonce);
    }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
