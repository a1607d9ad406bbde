// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/', 'node_modules/', 'coverage/', 'bench/results/', '.demo/', '*.js', '*.mjs'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The package's bin, the images' dependency check and tests' CommonJS fixtures (a compiled module as a
    // deployment has one): plain CommonJS, outside the TypeScript project.
    files: ['libs/messaging/bin/*.js', 'docker/*.cjs', 'test/**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'commonjs',
      globals: { require: 'readonly', __dirname: 'readonly', console: 'readonly', process: 'readonly' },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Outside the package, the library is imported by its name (its build), never from its sources:
    // a second copy of its classes would break Nest's dependency injection and instanceof checks.
    files: [
      'apps/**/*.ts',
      'test/**/*.ts',
      'bench/**/*.ts',
      'tools/**/*.ts',
      'examples/**/*.ts',
      'libs/service-kit/**/*.ts',
      'libs/contracts/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: 'libs/messaging/src', message: "Import 'nest-reliable-messaging' (or '/testing')." },
          ],
        },
      ],
    },
  },
  {
    // One clock (issue 31): the library reads time, starts timers and draws jitter only through the injected
    // `Clock` (docs/architecture.md, "Time and chance"), so a `FakeClock` drives all of it in tests.
    // Allowed: common/clock.ts (systemClock, the one place Node's are read) and common/fake-clock.ts (its
    // nextTurn is the real event loop's). The console's browser script (console/views/console-script.ts)
    // is a string served to the browser, not code ESLint sees. node:crypto's randomUUID/randomBytes stay:
    // ids, keys and nonces must be unpredictable, not faked.
    files: ['libs/messaging/src/**/*.ts'],
    ignores: [
      '**/*.spec.ts',
      'libs/messaging/src/common/clock.ts',
      'libs/messaging/src/common/fake-clock.ts',
    ],
    rules: {
      'no-restricted-globals': [
        'error',
        ...[
          'setTimeout',
          'setInterval',
          'setImmediate',
          'clearTimeout',
          'clearInterval',
          'clearImmediate',
        ].map((name) => ({
          name,
          message: 'Use the injected Clock (setTimeout, setInterval, sleep, nextTurn).',
        })),
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: "Use the injected Clock's now()." },
        { object: 'Math', property: 'random', message: "Use the injected Clock's random()." },
        { object: 'performance', property: 'now', message: "Use the injected Clock's now()." },
        ...['setTimeout', 'setInterval', 'setImmediate'].map((property) => ({
          object: 'globalThis',
          property,
          message: 'Use the injected Clock.',
        })),
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: "Use new Date(clock.now()) with the injected Clock's now().",
        },
        {
          selector: "CallExpression[callee.name='Date']",
          message: "Use new Date(clock.now()) with the injected Clock's now().",
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: ['timers', 'node:timers', 'timers/promises', 'node:timers/promises'].map((name) => ({
            name,
            message: 'Use the injected Clock.',
          })),
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
