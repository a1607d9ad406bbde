/**
 * The key secret (`deadLetter.keySecret`, `MESSAGING_KEY_SECRET`) of local development: the demo, the tests
 * and the benchmark. Public, so never one to deploy with: production takes `openssl rand -base64 32`.
 */
export const LOCAL_KEY_SECRET = 'bG9jYWwtZGV2ZWxvcG1lbnQta2V5LXNlY3JldC0zMmJ5dGVzIQ==';
