import type { ConsoleRequest, ConsoleResponse } from '../src/console/console-http';

/** Records what the console answers. Unit specs only; not part of the package. */
export class FakeResponse implements ConsoleResponse {
  statusCode = 200;
  body = '';
  location?: string;
  readonly headers = new Map<string, unknown>();
  status(code: number) {
    this.statusCode = code;
    return this;
  }
  setHeader(name: string, value: string | readonly string[]) {
    this.headers.set(name.toLowerCase(), value);
    return this;
  }
  getHeader(name: string) {
    return this.headers.get(name.toLowerCase());
  }
  send(body: string) {
    this.body = body;
    return this;
  }
  redirect(status: number, url: string) {
    this.statusCode = status;
    this.location = url;
  }
  /** The cookies it sets, by name. */
  cookies(): Record<string, string> {
    const list = (this.headers.get('set-cookie') as string[] | undefined) ?? [];
    return Object.fromEntries(list.map((c) => c.split(';')[0].split('=') as [string, string]));
  }
}

/** A request with these cookies, form fields and route/query parameters. */
export function fakeRequest(
  cookies: Record<string, string>,
  body: Record<string, unknown> = {},
  more: {
    ip?: string;
    /** The address of this machine the connection was made to. */
    localAddress?: string;
    params?: Record<string, string>;
    query?: Record<string, string>;
    headers?: Record<string, string>;
  } = {},
): ConsoleRequest {
  return {
    method: 'POST',
    headers: {
      ...more.headers,
      cookie: Object.entries(cookies)
        .map(([k, v]) => `${k}=${v}`)
        .join('; '),
    },
    body,
    query: more.query ?? {},
    params: more.params ?? {},
    secure: false,
    ip: more.ip ?? '10.0.0.1',
    ...(more.localAddress === undefined ? {} : { socket: { localAddress: more.localAddress } }),
  };
}
