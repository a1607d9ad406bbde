#!/usr/bin/env node
'use strict';
/*
 * The package's `bin`. A file of its own, outside dist/, so that npm links it even when the package is
 * installed before it is built (a workspace clone: `npm ci` links first, then `prepare` builds).
 */
const path = require('node:path');

const main = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
try {
  require.resolve(main);
} catch {
  console.error(
    `nest-messaging: ${main} is missing: the package is not built. In its repository: npm run build:lib`,
  );
  process.exit(1);
}
require(main);
