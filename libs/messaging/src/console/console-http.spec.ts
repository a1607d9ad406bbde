import { ConsoleRequest, cookie, cookiesOf } from './console-http';

const request = (cookieHeader?: string): ConsoleRequest => ({
  method: 'GET',
  headers: { cookie: cookieHeader },
  query: {},
  params: {},
  secure: false,
});

describe(cookiesOf.name, () => {
  it('reads the cookies by name, the first of a name winning, skipping malformed ones', () => {
    expect(cookiesOf(request('a=1; b=two%20words; a=3; broken; c=%E0%A4%A'))).toEqual({
      a: '1',
      b: 'two words',
    });
    expect(cookiesOf(request())).toEqual({});
  });
});

describe(cookie.name, () => {
  it('is HttpOnly, SameSite=Strict, scoped to the console path, Secure over HTTPS only', () => {
    expect(cookie('s', 'v', { path: '/console', maxAgeSeconds: 1800, secure: false })).toBe(
      's=v; Path=/console; Max-Age=1800; HttpOnly; SameSite=Strict',
    );
    expect(cookie('s', '', { path: '/ops', maxAgeSeconds: 0, secure: true })).toBe(
      's=; Path=/ops; Max-Age=0; HttpOnly; SameSite=Strict; Secure',
    );
  });
});
