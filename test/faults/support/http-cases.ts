/**
 * Bad HTTP requests the services must answer with a clear 4xx, and nothing written. The e2e suite already
 * covers the basics (wrong types, a missing and an unknown field, a 201-character title, empty content,
 * truncated JSON, a 20 kB body, an unknown post id); these are the rest.
 */

/** One bad request and what it must get. */
export interface BadRequestCase {
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** `post` or `subscribe` service. */
  readonly service: 'post' | 'subscribe';
  readonly path: string;
  /** The raw body, sent as `application/json`. */
  readonly body?: string;
  readonly status: 400 | 404 | 413;
  /** For a 400 about fields: the fields it names, sorted. */
  readonly fields?: readonly string[];
}

const post = (fields: Record<string, unknown>) =>
  JSON.stringify({ authorId: 7, title: 'T', content: 'C', ...fields });
const nested = (depth: number, open: string, close: string) => `${open.repeat(depth)}1${close.repeat(depth)}`;

export const BAD_REQUESTS: readonly BadRequestCase[] = [
  // Malformed JSON, and JSON that is not an object.
  {
    name: 'a trailing comma',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: '{"authorId": 7,}',
    status: 400,
  },
  { name: 'plain text', method: 'POST', service: 'post', path: '/posts', body: 'hello', status: 400 },
  { name: 'a JSON string', method: 'POST', service: 'post', path: '/posts', body: '"hello"', status: 400 },
  { name: 'JSON null', method: 'POST', service: 'post', path: '/posts', body: 'null', status: 400 },
  {
    name: 'an array of posts',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: `[${post({})}]`,
    status: 400,
    fields: ['0', 'authorId', 'content', 'title'],
  },
  {
    name: 'an empty body',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: '',
    status: 400,
    fields: ['authorId', 'content', 'title'],
  },
  // Wrong types and values.
  {
    name: 'nulls',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: '{"authorId": null, "title": null, "content": null}',
    status: 400,
    fields: ['authorId', 'content', 'title'],
  },
  {
    name: 'objects and arrays for strings',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: post({ title: { text: 'T' }, content: ['C'] }),
    status: 400,
    fields: ['content', 'title'],
  },
  {
    name: 'an author id past the integer column',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: post({ authorId: 2_147_483_648 }),
    status: 400,
    fields: ['authorId'],
  },
  {
    name: 'an author id of 1e400 (Infinity)',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: '{"authorId": 1e400, "title": "T", "content": "C"}',
    status: 400,
    fields: ['authorId'],
  },
  // Fields the client must not set.
  {
    name: 'an id and a creation time',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: post({ id: 1, createdAt: '2020-01-01T00:00:00Z' }),
    status: 400,
    fields: ['createdAt', 'id'],
  },
  // Oversized fields, counted as PostgreSQL counts characters (code points).
  {
    name: 'content of 10 001 characters',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: post({ content: 'x'.repeat(10_001) }),
    status: 400,
    fields: ['content'],
  },
  {
    name: 'a title of 150 "❤️" (300 code points)',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: post({ title: '❤️'.repeat(150) }),
    status: 400,
    fields: ['title'],
  },
  // Text PostgreSQL cannot store as given.
  {
    name: 'a NUL character in the title',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: post({ title: 'before\u0000after' }),
    status: 400,
    fields: ['title'],
  },
  {
    name: 'an unpaired surrogate in the title',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: '{"authorId": 7, "title": "broken \\ud800 pair", "content": "C"}',
    status: 400,
    fields: ['title'],
  },
  {
    name: 'an unpaired surrogate in the content',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: '{"authorId": 7, "title": "T", "content": "\\udc00"}',
    status: 400,
    fields: ['content'],
  },
  // Deep nesting within the size limit.
  {
    name: 'objects nested 2 500 deep',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: post({}).replace(/}$/, `, "x": ${nested(2_500, '{"x":', '}')}}`),
    status: 400,
  },
  {
    name: 'arrays nested 5 000 deep',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: post({}).replace(/}$/, `, "x": ${nested(5_000, '[', ']')}}`),
    status: 400,
  },
  // Huge bodies.
  {
    name: 'a 5 MB body',
    method: 'POST',
    service: 'post',
    path: '/posts',
    body: post({ content: 'x'.repeat(5_000_000) }),
    status: 413,
  },
  // Unknown and invalid ids.
  {
    name: 'post id 2147483647 (none)',
    method: 'GET',
    service: 'post',
    path: '/posts/2147483647',
    status: 404,
  },
  { name: 'post id abc', method: 'GET', service: 'post', path: '/posts/abc', status: 400, fields: ['id'] },
  { name: 'post id 0', method: 'GET', service: 'post', path: '/posts/0', status: 400, fields: ['id'] },
  { name: 'post id 1.5', method: 'GET', service: 'post', path: '/posts/1.5', status: 400, fields: ['id'] },
  { name: 'an unknown route', method: 'GET', service: 'post', path: '/articles', status: 404 },
  // subscribe-service.
  {
    name: 'a subscription with string ids',
    method: 'POST',
    service: 'subscribe',
    path: '/subscriptions',
    body: '{"subscriberId": "1", "authorId": "2"}',
    status: 400,
    fields: ['authorId', 'subscriberId'],
  },
  {
    name: 'a subscription with an unknown field',
    method: 'POST',
    service: 'subscribe',
    path: '/subscriptions',
    body: '{"subscriberId": 1, "authorId": 2, "role": "admin"}',
    status: 400,
    fields: ['role'],
  },
  {
    name: 'a subscription nested 2 500 deep',
    method: 'POST',
    service: 'subscribe',
    path: '/subscriptions',
    body: `{"subscriberId": 1, "authorId": 2, "x": ${nested(2_500, '{"x":', '}')}}`,
    status: 400,
  },
  {
    name: 'unsubscribing an unknown subscription',
    method: 'DELETE',
    service: 'subscribe',
    path: '/subscriptions/2147483647',
    status: 404,
  },
  {
    name: 'notifications of subscriber abc',
    method: 'GET',
    service: 'subscribe',
    path: '/subscribers/abc/notifications',
    status: 400,
    fields: ['id'],
  },
];

/** Requests on the edge of the limits that must be accepted (201), to show the limits are not too tight. */
export const EDGE_POSTS: readonly Record<string, unknown>[] = [
  { title: 'x'.repeat(200), content: 'x'.repeat(10_000) },
  { title: '😀'.repeat(200), content: '😀 '.repeat(100) },
  { title: 'A title with "quotes", \\ backslashes, tabs\tand newlines\n', content: 'ü ß 中文 עברית' },
];
